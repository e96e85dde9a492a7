"""What model servers answer to the provenance queries, in their real shapes (llama.cpp's
server ``/v1/models`` and ``/props``, Ollama's ``/api/show``)."""

LLAMA_CPP_MODELS = {"object": "list", "data": [{
    "id": "qwen2.5-0.5b-instruct-q8_0.gguf", "object": "model", "created": 1733000000, "owned_by": "llamacpp",
    "meta": {"vocab_type": 2, "n_vocab": 151936, "n_ctx_train": 32768, "n_embd": 896, "n_params": 494032768,
             "size": 531066880}}]}
LLAMA_CPP_PROPS = {
    "default_generation_settings": {"n_ctx": 8192, "params": {"temperature": 0.8, "top_k": 40, "top_p": 0.95,
                                                              "min_p": 0.05, "n_predict": -1, "seed": 4294967295,
                                                              "mirostat": 0}},
    "total_slots": 1, "model_path": "/models/qwen2.5-0.5b-instruct-q8_0.gguf",
    "chat_template": "{% for message in messages %}<|im_start|>{{ message.role }}{% endfor %}",
    "build_info": "b4500-adbed955",
}
OLLAMA_SHOW_BODY = {
    "modelfile": "FROM /root/.ollama/models/blobs/sha256-abc", "parameters": "num_ctx 2048\nstop \"<|im_end|>\"",
    "template": "{{ .System }}", "details": {"parent_model": "", "format": "gguf", "family": "qwen2",
                                          "families": ["qwen2"], "parameter_size": "494.03M",
                                          "quantization_level": "Q4_K_M"},
    "model_info": {"general.architecture": "qwen2", "qwen2.context_length": 32768},
    "capabilities": ["completion", "tools"],
}
