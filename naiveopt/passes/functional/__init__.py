"""Functional passes (paper 002, sect. 3): they build the GPU IR and write it back out."""
