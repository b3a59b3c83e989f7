"""Calibrations a corpus learns from its judged pairs: its ranking (`ranking`), its duplicate threshold
(`threshold`) and its match decisions (`match`)."""
