"""Region-constrained editing RL (CoCoEdit) against GRPO with an edit-success reward only."""
