"""Which GRPO settings let lesson 9.5's BaseLM lab show held-out learning? A probe (see README.md)."""
