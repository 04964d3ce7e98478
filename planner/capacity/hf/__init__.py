"""Reading a Hugging Face checkpoint's config.json, index and tensor shapes as hostile input."""
