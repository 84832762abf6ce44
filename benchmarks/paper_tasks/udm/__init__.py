"""UDM-GRPO: GRPO on a uniform discrete diffusion model of short strings (method task)."""
