"""What a run leaves on disk: run directories (the checkpoint format), files written safely, user
files read safely, provenance, TensorBoard."""
