"""QKV projection sharing on the tiny LM: the ``qkv-sharing`` recipe (:mod:`.qkv_sharing`)."""
