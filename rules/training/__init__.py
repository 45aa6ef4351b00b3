"""TL0xx: the patterns behind training failures and slowdowns (heavy imports, conv inputs, host syncs, cuDNN RNN double backward)."""
