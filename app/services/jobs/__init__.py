"""Jobs: rows in the database, claimed and run by workers (`pairank worker`, or one embedded in serve)."""
