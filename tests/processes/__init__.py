"""Tests that start real processes: servers, workers, CLIs, crashes, outages, full disks, soak."""
