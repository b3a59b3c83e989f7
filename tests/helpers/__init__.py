"""What many test folders share: the tiny model, databases, processes, backups, runtimes, doc blocks."""
