"""A tiny random-weights Llama model with a byte-level tokenizer, built in code.

It goes through the real ``from_pretrained`` path of transformers, so the local
backend's code (prefix cache, batching, constrained decoding) is tested without any
downloaded weights. Its answers are noise; only their consistency is tested.
"""

from __future__ import annotations

from pathlib import Path

CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}"
    "{% if not loop.last or add_generation_prompt %}<|end|>\n{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)


def build_tiny_model(folder: Path, seed: int = 0) -> Path:
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    alphabet = pre_tokenizers.ByteLevel.alphabet()
    vocab = {ch: i for i, ch in enumerate(sorted(alphabet))}
    specials = ["<|end|>", "<|system|>", "<|user|>", "<|assistant|>", "<|pad|>"]
    for token in specials:
        vocab[token] = len(vocab)
    backend = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    backend.add_special_tokens(specials)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend, eos_token="<|end|>", pad_token="<|pad|>"
    )
    tokenizer.chat_template = CHAT_TEMPLATE
    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=len(vocab),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=2048,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=None,
    )
    model = LlamaForCausalLM(config)
    # Larger random weights: sharper, more varied next-token distributions.
    with torch.no_grad():
        for parameter in model.parameters():
            if parameter.dim() == 2:
                parameter.normal_(0.0, 0.2)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder
