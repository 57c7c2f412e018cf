"""Voice notes: formats, audio for Assist, transcripts, spoken answers, privacy."""
