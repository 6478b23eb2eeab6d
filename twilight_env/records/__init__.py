"""Game records, deal files and the printed deal and replay logs."""
