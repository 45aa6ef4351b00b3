"""The guard over models it was not written against: every check on every step, 0 alarms expected.

    pip install transformers diffusers torch_geometric accelerate lightning scipy   # beside torch, no other torch
    python bench/guard_ecosystem.py [--only NAME] [--setups fp32,bf16,...]

Each case builds a small model from a package's own code (transformers and diffusers from
configs, no download; torch_geometric; plain torch for the recurrent, CTC and RL cases) and a
synthetic batch of the kind the model is trained on. Each set-up runs 3 training steps
(forward, loss, backward, AdamW step) and one eval forward under `guard(model)` with every
check family on every step, warnings as errors: any GuardError or GuardWarning is a false
alarm. Set-ups: fp32, bf16 autocast, fp16 autocast with a GradScaler, channels_last (image
models), gradient checkpointing (models that offer it), torch.compile (eager backend: the
compile warning is expected there and only there). A case whose package is missing is
skipped. Prints a Markdown table; `tests/runtime/test_guard_ecosystem.py` runs a fast subset.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent))
from guard_models import make_encoder, make_resnet, make_tagger  # noqa: E402

from torchlint.runtime import GuardError, GuardWarning, guard  # noqa: E402

EVERY_STEP = 10**9
SETUPS = ("fp32", "bf16", "fp16-scaler", "channels_last", "checkpointing", "compile")

# A batch: (positional args, keyword args, loss from the model's output)
Batch = Tuple[tuple, dict, Callable[[Any], torch.Tensor]]


@dataclass
class Case:
    name: str
    package: str
    build: Callable[[], Tuple[nn.Module, Callable[[int], Batch]]]
    image: bool = False  # channels_last applies
    checkpointing: bool = False  # transformers' gradient_checkpointing_enable(), diffusers' enable_...()


def _hf_output_loss(out: Any) -> torch.Tensor:
    return out.loss


def _tokens(step: int, batch: int, length: int, vocab: int) -> torch.Tensor:
    return torch.randint(3, vocab, (batch, length), generator=torch.Generator().manual_seed(step))


def _hf_lm(config_name: str, model_name: str, **config: Any) -> Callable[[], Any]:
    def build():
        transformers = importlib.import_module("transformers")
        model = getattr(transformers, model_name)(getattr(transformers, config_name)(**config))

        def batch(step: int) -> Batch:
            ids = _tokens(step, 2, 12, config.get("vocab_size", 100))
            return (), {"input_ids": ids, "labels": ids.clone()}, _hf_output_loss
        return model, batch
    return build


def _hf_seq2seq(config_name: str, model_name: str, **config: Any) -> Callable[[], Any]:
    def build():
        transformers = importlib.import_module("transformers")
        model = getattr(transformers, model_name)(getattr(transformers, config_name)(**config))

        def batch(step: int) -> Batch:
            ids = _tokens(step, 2, 10, 100)
            labels = _tokens(step + 1000, 2, 7, 100)
            labels[:, -2:] = -100  # padding, as a collator writes it
            return (), {"input_ids": ids, "attention_mask": torch.ones_like(ids), "labels": labels}, _hf_output_loss
        return model, batch
    return build


SMALL_TEXT = dict(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64)
SMALL_SEQ2SEQ = dict(vocab_size=100, d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=2,
                     decoder_attention_heads=2, encoder_ffn_dim=64, decoder_ffn_dim=64, max_position_embeddings=64)


def _bert_mlm():
    transformers = importlib.import_module("transformers")
    model = transformers.BertForMaskedLM(transformers.BertConfig(**SMALL_TEXT, max_position_embeddings=64))

    def batch(step: int) -> Batch:
        ids = _tokens(step, 2, 12, 100)
        labels = torch.full_like(ids, -100)
        labels[:, ::4] = ids[:, ::4]
        return (), {"input_ids": ids, "attention_mask": torch.ones_like(ids), "labels": labels}, _hf_output_loss
    return model, batch


def _whisper():
    transformers = importlib.import_module("transformers")
    config = transformers.WhisperConfig(vocab_size=100, d_model=32, encoder_layers=1, decoder_layers=1,
                                        encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=64,
                                        decoder_ffn_dim=64, num_mel_bins=16, max_source_positions=20,
                                        max_target_positions=32, pad_token_id=0, bos_token_id=1, eos_token_id=2,
                                        decoder_start_token_id=1)
    model = transformers.WhisperForConditionalGeneration(config)

    def batch(step: int) -> Batch:
        features = torch.randn(2, 16, 40, generator=torch.Generator().manual_seed(step))
        return (), {"input_features": features, "labels": _tokens(step, 2, 6, 100)}, _hf_output_loss
    return model, batch


def _hf_image_classifier(config_name: str, model_name: str, size: int = 32, **config: Any) -> Callable[[], Any]:
    def build():
        transformers = importlib.import_module("transformers")
        model = getattr(transformers, model_name)(getattr(transformers, config_name)(num_labels=5, **config))

        def batch(step: int) -> Batch:
            generator = torch.Generator().manual_seed(step)
            pixels = torch.randn(2, 3, size, size, generator=generator)
            return (), {"pixel_values": pixels, "labels": torch.randint(0, 5, (2,), generator=generator)}, \
                _hf_output_loss
        return model, batch
    return build


def _wav2vec2_ctc():
    transformers = importlib.import_module("transformers")
    config = transformers.Wav2Vec2Config(vocab_size=20, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                                         intermediate_size=64, conv_dim=(16, 16), conv_stride=(5, 2),
                                         conv_kernel=(10, 3), num_feat_extract_layers=2, num_conv_pos_embeddings=16,
                                         num_conv_pos_embedding_groups=2, pad_token_id=0, ctc_loss_reduction="mean")
    model = transformers.Wav2Vec2ForCTC(config)

    def batch(step: int) -> Batch:
        generator = torch.Generator().manual_seed(step)
        audio = torch.randn(2, 1600, generator=generator)
        labels = torch.randint(1, 20, (2, 8), generator=generator)
        labels[1, -2:] = -100
        return (), {"input_values": audio, "labels": labels}, _hf_output_loss
    return model, batch


def _segformer():
    transformers = importlib.import_module("transformers")
    config = transformers.SegformerConfig(num_labels=4, hidden_sizes=[8, 16, 24, 32], depths=[1, 1, 1, 1],
                                          num_attention_heads=[1, 1, 2, 2], decoder_hidden_size=32)
    model = transformers.SegformerForSemanticSegmentation(config)

    def batch(step: int) -> Batch:
        generator = torch.Generator().manual_seed(step)
        labels = torch.randint(0, 4, (2, 32, 32), generator=generator)
        labels[:, :2] = 255  # the ignore index of segmentation data sets
        return (), {"pixel_values": torch.randn(2, 3, 32, 32, generator=generator), "labels": labels}, \
            _hf_output_loss
    return model, batch


def _detection_batch(step: int) -> Batch:
    """Two 64x64 images with two boxes of 3 classes each, as DETR-style models take their targets."""
    generator = torch.Generator().manual_seed(step)
    targets = [{"class_labels": torch.randint(0, 3, (2,), generator=generator),
                "boxes": torch.rand(2, 4, generator=generator) * 0.5 + 0.25} for _ in range(2)]
    return (), {"pixel_values": torch.randn(2, 3, 64, 64, generator=generator), "labels": targets}, _hf_output_loss


def _detr():
    transformers = importlib.import_module("transformers")
    importlib.import_module("scipy")  # DETR's Hungarian matcher
    backbone = transformers.ResNetConfig(embedding_size=8, hidden_sizes=[8, 16, 24, 32], depths=[1, 1, 1, 1],
                                         out_features=["stage4"])
    config = transformers.DetrConfig(use_timm_backbone=False, backbone_config=backbone, use_pretrained_backbone=False,
                                     d_model=32, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2,
                                     decoder_attention_heads=2, encoder_ffn_dim=64, decoder_ffn_dim=64,
                                     num_queries=8, num_labels=3)
    model = transformers.DetrForObjectDetection(config)
    return model, _detection_batch


def _clip():
    transformers = importlib.import_module("transformers")
    text = dict(vocab_size=100, hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64,
                max_position_embeddings=16)
    vision = dict(hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64, image_size=32,
                  patch_size=8)
    model = transformers.CLIPModel(transformers.CLIPConfig(text_config=text, vision_config=vision,
                                                           projection_dim=16))

    def batch(step: int) -> Batch:
        generator = torch.Generator().manual_seed(step)
        return (), {"input_ids": _tokens(step, 2, 8, 100), "pixel_values": torch.randn(2, 3, 32, 32,
                                                                                        generator=generator),
                    "return_loss": True}, _hf_output_loss
    return model, batch


def _noise_prediction(scheduler: Any, channels: int, step: int, **kwargs: Any) -> Batch:
    """DDPM training: noised images at random timesteps in, the noise to predict as the target."""
    generator = torch.Generator().manual_seed(step)
    clean = torch.randn(2, channels, 16, 16, generator=generator)
    noise = torch.randn(2, channels, 16, 16, generator=generator)
    timesteps = torch.randint(0, 100, (2,), generator=generator)
    return (scheduler.add_noise(clean, noise, timesteps), timesteps), kwargs, \
        lambda out: F.mse_loss(out.sample.float(), noise)


def _diffusion_unet():
    diffusers = importlib.import_module("diffusers")
    model = diffusers.UNet2DModel(sample_size=16, in_channels=3, out_channels=3, layers_per_block=1,
                                  block_out_channels=(16, 32), norm_num_groups=8,
                                  down_block_types=("DownBlock2D", "AttnDownBlock2D"),
                                  up_block_types=("AttnUpBlock2D", "UpBlock2D"))
    scheduler = diffusers.DDPMScheduler(num_train_timesteps=100)

    return model, lambda step: _noise_prediction(scheduler, 3, step)


def _graph(layer_name: str) -> Callable[[], Any]:
    def build():
        pyg = importlib.import_module("torch_geometric.nn")

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.one, self.two = getattr(pyg, layer_name)(8, 16), getattr(pyg, layer_name)(16, 4)

            def forward(self, x, edge_index):
                return self.two(F.relu(self.one(x, edge_index)), edge_index)

        def batch(step: int) -> Batch:
            generator = torch.Generator().manual_seed(step)
            x = torch.randn(30, 8, generator=generator)
            edges = torch.randint(0, 30, (2, 90), generator=generator)
            labels = torch.randint(0, 4, (30,), generator=generator)
            return (x, edges), {}, lambda out: F.cross_entropy(out, labels)
        return Net(), batch
    return build


class Seq2Seq(nn.Module):
    """LSTM encoder, GRU decoder with teacher forcing, padded targets ignored."""

    def __init__(self, vocab: int = 60, dim: int = 32) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, dim, padding_idx=0)
        self.encoder = nn.LSTM(dim, dim, batch_first=True, bidirectional=True)
        self.bridge = nn.Linear(2 * dim, dim)
        self.decoder = nn.GRU(dim, dim, batch_first=True)
        self.out = nn.Linear(dim, vocab)

    def forward(self, source, target_in):
        encoded, _ = self.encoder(self.embed(source))
        state = torch.tanh(self.bridge(encoded.mean(1))).unsqueeze(0)
        decoded, _ = self.decoder(self.embed(target_in), state)
        return self.out(decoded)


def _seq2seq():
    def batch(step: int) -> Batch:
        source, target = _tokens(step, 3, 9, 60), _tokens(step + 500, 3, 7, 60)
        target[0, -2:] = 0
        labels = target[:, 1:].masked_fill(target[:, 1:] == 0, -100)
        return (source, target[:, :-1]), {}, lambda out: F.cross_entropy(out.transpose(1, 2), labels)
    return Seq2Seq(), batch


class CTCRecognizer(nn.Module):
    def __init__(self, features: int = 20, classes: int = 12) -> None:
        super().__init__()
        self.conv = nn.Conv1d(features, 32, 3, padding=1)
        self.rnn = nn.GRU(32, 32, batch_first=True, bidirectional=True)
        self.head = nn.Linear(64, classes)

    def forward(self, x):
        return self.head(self.rnn(F.relu(self.conv(x)).transpose(1, 2))[0]).log_softmax(-1)


def _ctc():
    ctc = nn.CTCLoss(blank=0, zero_infinity=False)

    def batch(step: int) -> Batch:
        generator = torch.Generator().manual_seed(step)
        features = torch.randn(3, 20, 30, generator=generator)
        targets = torch.randint(1, 12, (3, 8), generator=generator)
        lengths = torch.tensor([8, 6, 5])
        return (features,), {}, lambda out: ctc(out.transpose(0, 1), targets, torch.full((3,), 30), lengths)
    return CTCRecognizer(), batch


class MaskedPolicy(nn.Module):
    """An actor-critic whose invalid actions get -inf logits (games, combinatorial RL)."""

    def __init__(self, observations: int = 10, actions: int = 6) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Linear(observations, 32), nn.Tanh())
        self.actor, self.critic = nn.Linear(32, actions), nn.Linear(32, 1)

    def forward(self, obs, valid):
        hidden = self.body(obs)
        return self.actor(hidden).masked_fill(~valid, float("-inf")), self.critic(hidden).squeeze(-1)


def _rl_policy():
    def batch(step: int) -> Batch:
        generator = torch.Generator().manual_seed(step)
        obs = torch.randn(8, 10, generator=generator)
        valid = torch.rand(8, 6, generator=generator) > 0.4
        valid[:, 0] = True
        returns = torch.randn(8, generator=generator)

        def ppo_loss(out):
            logits, value = out
            dist = torch.distributions.Categorical(logits=logits.float())
            action = dist.sample()
            advantage = (returns - value.float()).detach()
            return (-(dist.log_prob(action) * advantage).mean() + F.mse_loss(value.float(), returns)
                    - 0.01 * dist.entropy().mean())
        return (obs, valid), {}, ppo_loss
    return MaskedPolicy(), batch


def _roberta_mlm():
    # RoBERTa counts positions from padding_idx + 1: its position table is indexed with ids built from the input
    transformers = importlib.import_module("transformers")
    model = transformers.RobertaForMaskedLM(transformers.RobertaConfig(**SMALL_TEXT, max_position_embeddings=66,
                                                                       pad_token_id=1))

    def batch(step: int) -> Batch:
        ids = _tokens(step, 2, 12, 100)
        ids[1, -3:] = 1  # padding
        labels = torch.full_like(ids, -100)
        labels[:, ::3] = ids[:, ::3]
        return (), {"input_ids": ids, "attention_mask": (ids != 1).long(), "labels": labels}, _hf_output_loss
    return model, batch


def _yolos():
    transformers = importlib.import_module("transformers")
    importlib.import_module("scipy")  # the Hungarian matcher
    config = transformers.YolosConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                                      intermediate_size=64, image_size=[64, 64], patch_size=16,
                                      num_detection_tokens=8, num_labels=3)
    model = transformers.YolosForObjectDetection(config)
    return model, _detection_batch


def _speech2text():
    transformers = importlib.import_module("transformers")
    config = transformers.Speech2TextConfig(vocab_size=100, d_model=32, encoder_layers=1, decoder_layers=1,
                                            encoder_attention_heads=2, decoder_attention_heads=2,
                                            encoder_ffn_dim=64, decoder_ffn_dim=64, input_feat_per_channel=16,
                                            conv_channels=32, max_source_positions=64, max_target_positions=32,
                                            pad_token_id=1, bos_token_id=0, eos_token_id=2,
                                            decoder_start_token_id=2)
    model = transformers.Speech2TextForConditionalGeneration(config)

    def batch(step: int) -> Batch:
        generator = torch.Generator().manual_seed(step)
        features = torch.randn(2, 40, 16, generator=generator)
        mask = torch.ones(2, 40, dtype=torch.long)
        mask[1, -8:] = 0  # a shorter utterance, padded
        labels = _tokens(step, 2, 6, 100)
        labels[1, -2:] = -100
        return (), {"input_features": features, "attention_mask": mask, "labels": labels}, _hf_output_loss
    return model, batch


def _vae():
    diffusers = importlib.import_module("diffusers")
    model = diffusers.AutoencoderKL(in_channels=3, out_channels=3, latent_channels=4, block_out_channels=(16, 32),
                                    down_block_types=("DownEncoderBlock2D", "DownEncoderBlock2D"),
                                    up_block_types=("UpDecoderBlock2D", "UpDecoderBlock2D"), norm_num_groups=8,
                                    layers_per_block=1, sample_size=16)

    def batch(step: int) -> Batch:
        images = torch.randn(2, 3, 16, 16, generator=torch.Generator().manual_seed(step))

        def vae_loss(out: Any) -> torch.Tensor:
            # reconstruction plus the KL term of a VAE, the autoencoder of latent diffusion
            posterior = model.encode(images).latent_dist
            return F.mse_loss(out.sample.float(), images) + 1e-4 * posterior.kl().mean()
        return (images,), {"sample_posterior": True, "generator": torch.Generator().manual_seed(step)}, vae_loss
    return model, batch


def _conditional_unet():
    diffusers = importlib.import_module("diffusers")
    model = diffusers.UNet2DConditionModel(sample_size=16, in_channels=4, out_channels=4, layers_per_block=1,
                                           block_out_channels=(16, 32), norm_num_groups=8, cross_attention_dim=24,
                                           attention_head_dim=8,
                                           down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"),
                                           up_block_types=("UpBlock2D", "CrossAttnUpBlock2D"))
    scheduler = diffusers.DDPMScheduler(num_train_timesteps=100)

    def batch(step: int) -> Batch:
        text = torch.randn(2, 7, 24, generator=torch.Generator().manual_seed(step + 1000))  # text encoder states
        return _noise_prediction(scheduler, 4, step, encoder_hidden_states=text)
    return model, batch


def _graph_classifier():
    # GIN over a batch of small graphs, pooled per graph: scatter-based message passing and pooling
    pyg = importlib.import_module("torch_geometric.nn")

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.one = pyg.GINConv(nn.Sequential(nn.Linear(8, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 16)))
            self.two = pyg.SAGEConv(16, 16)
            self.head = nn.Linear(16, 3)

        def forward(self, x, edge_index, graph):
            x = F.relu(self.two(F.relu(self.one(x, edge_index)), edge_index))
            return self.head(pyg.global_mean_pool(x, graph))

    def batch(step: int) -> Batch:
        generator = torch.Generator().manual_seed(step)
        graph = torch.arange(4).repeat_interleave(10)  # 4 graphs of 10 nodes
        edges = torch.randint(0, 10, (2, 80), generator=generator) + torch.arange(80) // 20 * 10  # within a graph
        labels = torch.randint(0, 3, (4,), generator=generator)
        return (torch.randn(40, 8, generator=generator), edges, graph), {}, lambda out: F.cross_entropy(out, labels)
    return Net(), batch


class DQN(nn.Module):
    def __init__(self, observations: int = 8, actions: int = 4) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(observations, 32), nn.ReLU(), nn.Linear(32, actions))

    def forward(self, obs):
        return self.net(obs)


def _dqn():
    # a DQN update: Q of the taken actions by gather, a target network's max, a Huber loss
    target = DQN()

    def batch(step: int) -> Batch:
        generator = torch.Generator().manual_seed(step)
        obs, following = torch.randn(16, 8, generator=generator), torch.randn(16, 8, generator=generator)
        actions = torch.randint(0, 4, (16, 1), generator=generator)
        rewards, done = torch.randn(16, generator=generator), torch.rand(16, generator=generator) < 0.1

        def td_loss(q: Any) -> torch.Tensor:
            with torch.no_grad():
                best = target(following).max(1).values
            wanted = rewards + 0.99 * best * (~done)
            return F.smooth_l1_loss(q.float().gather(1, actions).squeeze(1), wanted)
        return (obs,), {}, td_loss
    return DQN(), batch


def _torch_model(make: Callable[..., Any], **sizes: Any) -> Callable[[], Any]:
    def build():
        model, batch_for = make(**sizes)

        def batch(step: int) -> Batch:
            inputs, loss_fn = batch_for(step)
            return inputs, {}, loss_fn
        return model, batch
    return build


CASES: List[Case] = [
    Case("resnet18 layout", "torch", _torch_model(make_resnet, batch=2, size=32, width=8), image=True),
    Case("lstm tagger", "torch", _torch_model(make_tagger, batch=4, length=12)),
    Case("nn.TransformerEncoder classifier", "torch", _torch_model(make_encoder)),
    Case("lstm/gru seq2seq", "torch", _seq2seq),
    Case("conv+gru CTC recogniser", "torch", _ctc),
    Case("masked actor-critic (RL)", "torch", _rl_policy),
    Case("BERT masked LM", "transformers", _bert_mlm, checkpointing=True),
    Case("GPT-2 LM", "transformers", _hf_lm("GPT2Config", "GPT2LMHeadModel", vocab_size=100, n_embd=32, n_layer=2,
                                            n_head=2, n_positions=64), checkpointing=True),
    Case("OPT LM", "transformers", _hf_lm("OPTConfig", "OPTForCausalLM", vocab_size=100, hidden_size=32,
                                          num_hidden_layers=2, num_attention_heads=2, ffn_dim=64,
                                          word_embed_proj_dim=32, max_position_embeddings=64), checkpointing=True),
    Case("Llama LM", "transformers", _hf_lm("LlamaConfig", "LlamaForCausalLM", **SMALL_TEXT, num_key_value_heads=1,
                                            max_position_embeddings=64), checkpointing=True),
    Case("BART seq2seq", "transformers", _hf_seq2seq("BartConfig", "BartForConditionalGeneration", **SMALL_SEQ2SEQ),
         checkpointing=True),
    Case("mBART seq2seq", "transformers", _hf_seq2seq("MBartConfig", "MBartForConditionalGeneration",
                                                      **SMALL_SEQ2SEQ), checkpointing=True),
    Case("T5 seq2seq", "transformers", _hf_seq2seq("T5Config", "T5ForConditionalGeneration", vocab_size=100,
                                                   d_model=32, d_kv=16, d_ff=64, num_layers=2, num_heads=2,
                                                   decoder_start_token_id=0), checkpointing=True),
    Case("Whisper (speech seq2seq)", "transformers", _whisper, checkpointing=True),
    Case("wav2vec2 CTC (speech)", "transformers", _wav2vec2_ctc, checkpointing=True),
    Case("ViT classifier", "transformers", _hf_image_classifier("ViTConfig", "ViTForImageClassification",
                                                                hidden_size=32, num_hidden_layers=2,
                                                                num_attention_heads=2, intermediate_size=64,
                                                                image_size=32, patch_size=8), image=True,
         checkpointing=True),
    Case("ConvNeXt classifier", "transformers", _hf_image_classifier("ConvNextConfig", "ConvNextForImageClassification",
                                                                     hidden_sizes=[8, 16, 24, 32],
                                                                     depths=[1, 1, 1, 1]), image=True),
    Case("ResNet classifier", "transformers", _hf_image_classifier("ResNetConfig", "ResNetForImageClassification",
                                                                   embedding_size=8, hidden_sizes=[8, 16, 24, 32],
                                                                   depths=[1, 1, 1, 1]), image=True),
    Case("SegFormer segmentation", "transformers", _segformer, image=True),
    Case("DETR detection with targets", "transformers", _detr, image=True),
    Case("CLIP contrastive", "transformers", _clip),
    Case("diffusers UNet2D (DDPM noise loss)", "diffusers", _diffusion_unet, image=True),
    Case("GCN node classifier", "torch_geometric", _graph("GCNConv")),
    Case("GAT node classifier", "torch_geometric", _graph("GATConv")),
    Case("Mistral LM", "transformers", _hf_lm("MistralConfig", "MistralForCausalLM", **SMALL_TEXT,
                                              num_key_value_heads=1, max_position_embeddings=64, sliding_window=8),
         checkpointing=True),
    Case("RoBERTa masked LM (padded)", "transformers", _roberta_mlm, checkpointing=True),
    Case("Swin classifier", "transformers", _hf_image_classifier("SwinConfig", "SwinForImageClassification",
                                                                 image_size=32, patch_size=2, embed_dim=8,
                                                                 depths=[1, 1], num_heads=[1, 2], window_size=4),
         image=True, checkpointing=True),
    Case("MobileNetV2 classifier", "transformers", _hf_image_classifier("MobileNetV2Config",
                                                                        "MobileNetV2ForImageClassification",
                                                                        depth_multiplier=0.25, image_size=32),
         image=True),
    Case("YOLOS detection with targets", "transformers", _yolos, image=True),
    Case("Speech2Text (speech seq2seq)", "transformers", _speech2text, checkpointing=True),
    Case("diffusers AutoencoderKL (VAE)", "diffusers", _vae, image=True, checkpointing=True),
    Case("diffusers UNet2DCondition (text-conditioned)", "diffusers", _conditional_unet, image=True,
         checkpointing=True),
    Case("GIN+SAGE graph classifier", "torch_geometric", _graph_classifier),
    Case("DQN with target network (RL)", "torch", _dqn),
]


def _available(package: str) -> bool:
    try:
        importlib.import_module(package)
        return True
    except Exception:  # missing, or present but not importable beside this torch
        return False


def applies(case: Case, setup: str) -> bool:
    return {"channels_last": case.image, "checkpointing": case.checkpointing}.get(setup, True)


def run_case(case: Case, setup: str, steps: int = 3) -> str:
    """'ok', or the alarm / error text. Raises nothing."""
    torch.manual_seed(0)
    model, batch = case.build()
    model.train()
    if setup == "channels_last":
        model = model.to(memory_format=torch.channels_last)
    if setup == "checkpointing":  # transformers' name, then diffusers'
        enable = getattr(model, "gradient_checkpointing_enable", None) or model.enable_gradient_checkpointing
        enable()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    scaler = torch.amp.GradScaler("cpu") if setup == "fp16-scaler" else None
    dtype = {"bf16": torch.bfloat16, "fp16-scaler": torch.float16}.get(setup)
    runner = torch.compile(model, backend="eager") if setup == "compile" else model
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", GuardWarning)
            if setup == "compile":
                warnings.filterwarnings("ignore", "torchlint guard: .*compiled with torch.compile", GuardWarning)
            with guard(model, first=EVERY_STEP):
                for step in range(steps):
                    args, kwargs, loss_fn = batch(step)
                    if setup == "channels_last":
                        args = tuple(a.to(memory_format=torch.channels_last) if _image(a) else a for a in args)
                        kwargs = {k: v.to(memory_format=torch.channels_last) if _image(v) else v
                                  for k, v in kwargs.items()}
                    with torch.autocast("cpu", dtype=dtype, enabled=dtype is not None):
                        loss = loss_fn(runner(*args, **kwargs))
                    optimizer.zero_grad()
                    if scaler is not None:
                        scaler.scale(loss).backward()
                        scaler.step(optimizer)
                        scaler.update()
                    else:
                        loss.backward()
                        optimizer.step()
                model.eval()
                with torch.no_grad():
                    args, kwargs, _ = batch(steps)
                    runner(*args, **kwargs)
    except (GuardError, GuardWarning) as alarm:
        return "ALARM " + str(alarm).splitlines()[0]
    except Exception as error:
        return f"error (not the guard's): {type(error).__name__}: {str(error).splitlines()[0][:160]}"
    return "ok"


def _image(value: Any) -> bool:
    return isinstance(value, torch.Tensor) and value.dim() == 4 and value.is_floating_point()


# Training set-ups run by a framework: (name, package, run) where run() trains and evaluates under the guard.
def _hf_trainer() -> None:
    import tempfile

    transformers = importlib.import_module("transformers")
    model = transformers.BertForSequenceClassification(transformers.BertConfig(**SMALL_TEXT, num_labels=3,
                                                                               max_position_embeddings=64))
    rows = [{"input_ids": _tokens(i, 1, 12, 100)[0], "labels": torch.tensor(i % 3)} for i in range(12)]
    with tempfile.TemporaryDirectory() as out:
        arguments = transformers.TrainingArguments(output_dir=out, max_steps=3, per_device_train_batch_size=4,
                                                   use_cpu=True, report_to=[], save_strategy="no", logging_steps=1,
                                                   bf16=True)
        trainer = transformers.Trainer(model=model, args=arguments, train_dataset=rows, eval_dataset=rows[:4])
        with guard(model, first=EVERY_STEP):
            trainer.train()
            trainer.evaluate()


def _accelerate() -> None:
    accelerate = importlib.import_module("accelerate")
    from torchlint.runtime import guard_accelerator

    model, batch = _hf_lm("GPT2Config", "GPT2LMHeadModel", vocab_size=100, n_embd=32, n_layer=2, n_head=2,
                          n_positions=64)()
    accelerator = accelerate.Accelerator(cpu=True, mixed_precision="bf16")
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    prepared, optimizer = accelerator.prepare(model, optimizer)
    with guard_accelerator(accelerator, prepared, first=EVERY_STEP):
        for step in range(3):
            _, kwargs, loss_fn = batch(step)
            accelerator.backward(loss_fn(prepared(**kwargs)))
            optimizer.step()
            optimizer.zero_grad()


def _lightning() -> None:
    lightning = importlib.import_module("lightning.pytorch")
    from torchlint.runtime import GuardCallback

    class Module(lightning.LightningModule):
        def __init__(self):
            super().__init__()
            self.net = Seq2Seq()

        def training_step(self, batch, batch_idx):
            source, target = batch
            labels = target[:, 1:].masked_fill(target[:, 1:] == 0, -100)
            return F.cross_entropy(self.net(source, target[:, :-1]).transpose(1, 2), labels)

        def validation_step(self, batch, batch_idx):
            self.training_step(batch, batch_idx)

        def configure_optimizers(self):
            return torch.optim.AdamW(self.parameters(), lr=1e-3)

    data = torch.utils.data.TensorDataset(_tokens(0, 12, 9, 60), _tokens(1, 12, 7, 60))
    loader = torch.utils.data.DataLoader(data, batch_size=4)
    trainer = lightning.Trainer(max_epochs=1, accelerator="cpu", precision="32-true", logger=False,
                                enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
                                callbacks=[GuardCallback(first=EVERY_STEP)])
    trainer.fit(Module(), loader, loader)


def _ddp_gloo() -> None:
    import socket

    distributed = torch.distributed
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    distributed.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=0, world_size=1)
    try:
        model, batch = _torch_model(make_resnet, batch=2, size=32, width=8)()
        parallel = nn.parallel.DistributedDataParallel(model)
        optimizer = torch.optim.SGD(parallel.parameters(), lr=0.01)
        with guard(parallel, first=EVERY_STEP):
            for step in range(3):
                args, _, loss_fn = batch(step)
                loss_fn(parallel(*args)).backward()
                optimizer.step()
                optimizer.zero_grad()
    finally:
        distributed.destroy_process_group()


def _ddp_rank(rank: int, world: int, port: int, fault_rank: int, results: Any) -> None:
    """One rank of a DDP (gloo) run: a ResNet layout and a token encoder, 3 guarded steps each, every check
    on every step. On `fault_rank` the encoder's batch holds a token id equal to the vocabulary size.
    Each rank's outcome goes to `results`; the ranks agree after each forward whether to go on, so a
    rank whose forward is stopped by the guard leaves no other rank waiting in backward's all-reduce."""
    import datetime

    from guard_models import make_encoder

    torch.set_num_threads(1)
    torch.manual_seed(0)
    distributed = torch.distributed
    distributed.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world,
                                   timeout=datetime.timedelta(seconds=60))
    outcome = "ok"
    try:
        for make, sizes in ((make_resnet, dict(batch=2, size=32, width=8)), (make_encoder, dict(batch=2, length=8))):
            stopped = _ddp_steps(make(**sizes), rank, world, fault_rank if make is make_encoder else -1)
            if stopped:
                outcome = stopped
                break
    except Exception as error:
        outcome = f"error (not the guard's): {type(error).__name__}: {str(error).splitlines()[0][:160]}"
    finally:
        results.put((rank, outcome))
        # the DDP modules (and the process group their reducers hold) are gone by now (`_ddp_steps` returned);
        # the ranks tear down together: a process group destroyed while a module or the other rank still used
        # it aborted gloo's threads now and then ("terminate called without an active exception", SIGABRT)
        gc.collect()
        distributed.barrier()
        distributed.destroy_process_group()


def _ddp_steps(built: Tuple[nn.Module, Any], rank: int, world: int, fault_rank: int) -> str:
    """3 guarded DDP steps of one model on this rank (on `fault_rank`, a token id equal to the vocabulary
    size); "" when every rank went through, else why the ranks stopped. Every object holding the process
    group lives in this frame only, so it is freed when this returns."""
    model, batch = built
    parallel = nn.parallel.DistributedDataParallel(model)
    optimizer = torch.optim.SGD(parallel.parameters(), lr=0.01)
    with warnings.catch_warnings():
        warnings.simplefilter("error", GuardWarning)
        with guard(parallel, first=EVERY_STEP):
            for step in range(3):
                inputs, loss_fn = batch(step * world + rank)
                if rank == fault_rank:
                    inputs[0][0, 0] = 1000  # == num_embeddings
                try:
                    loss, failed = loss_fn(parallel(*inputs)), ""
                except (GuardError, GuardWarning) as alarm:
                    loss, failed = None, "ALARM " + str(alarm).splitlines()[0]
                everyone = [""] * world
                torch.distributed.all_gather_object(everyone, failed)
                if any(everyone):
                    return failed or "stopped: another rank's guard raised"
                loss.backward()
                optimizer.step()
                optimizer.zero_grad()
    return ""


def ddp_two_ranks(fault_rank: int = -1) -> Dict[int, str]:
    """Each rank's outcome of a guarded DDP run at world size 2 (gloo, CPU, spawned processes)."""
    import socket

    context = torch.multiprocessing.get_context("spawn")
    results = context.SimpleQueue()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    try:
        torch.multiprocessing.spawn(_ddp_rank, args=(2, port, fault_rank, results), nprocs=2)
        teardown = None
    except torch.multiprocessing.ProcessExitedException as error:
        teardown = error
    outcomes = {}
    while not results.empty():
        rank, outcome = results.get()
        outcomes[rank] = outcome
    if teardown is not None and sorted(outcomes) != [0, 1]:
        raise teardown
    # a rank that died after both had reported died in gloo's teardown, after what is measured here
    return outcomes


def _ddp_world_two() -> str:
    outcomes = ddp_two_ranks()
    if sorted(outcomes) != [0, 1]:
        return f"error (not the guard's): outcomes of ranks {sorted(outcomes)} only"
    return next((f"{outcome} (rank {rank})" for rank, outcome in sorted(outcomes.items()) if outcome != "ok"), "ok")


FRAMEWORK_RUNS = [
    ("HF Trainer, BERT classifier, bf16", "transformers", _hf_trainer),
    ("Accelerate, GPT-2, bf16", "accelerate", _accelerate),
    ("Lightning, LSTM/GRU seq2seq, automatic optimisation (optimizer closure)", "lightning", _lightning),
    ("DDP (gloo, one process), ResNet layout", "torch", _ddp_gloo),
    ("DDP (gloo, 2 processes), ResNet layout and token encoder", "torch", _ddp_world_two),
]


def run_framework(run: Callable[[], Optional[str]]) -> str:
    torch.manual_seed(0)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", GuardWarning)
            outcome = run()  # a run in other processes says its outcome
    except (GuardError, GuardWarning) as alarm:
        return "ALARM " + str(alarm).splitlines()[0]
    except Exception as error:
        return f"error (not the guard's): {type(error).__name__}: {str(error).splitlines()[0][:160]}"
    return outcome if isinstance(outcome, str) else "ok"


def versions() -> Dict[str, str]:
    found = {"torch": torch.__version__}
    for package in ("transformers", "diffusers", "torch_geometric", "accelerate", "lightning", "scipy"):
        try:
            found[package] = importlib.import_module(package).__version__
        except Exception:
            found[package] = "not installed"
    return found


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="cases whose name contains this")
    parser.add_argument("--setups", default=",".join(SETUPS))
    parser.add_argument("--frameworks", action="store_true", help="with --only: run the framework set-ups too")
    options = parser.parse_args(argv)
    setups = [s for s in options.setups.split(",") if s]
    print(", ".join(f"{name} {version}" for name, version in versions().items()))
    print("\n| case | package | " + " | ".join(setups) + " |")
    print("| --- | --- | " + " | ".join("---" for _ in setups) + " |")
    alarms = runs = 0
    started = time.perf_counter()
    for case in CASES:
        if options.only.lower() not in case.name.lower():
            continue
        if not _available(case.package):
            print(f"| {case.name} | {case.package} | " + " | ".join("skipped" for _ in setups) + " |")
            continue
        cells = []
        for setup in setups:
            if not applies(case, setup):
                cells.append("-")
                continue
            outcome = run_case(case, setup)
            runs += 1
            alarms += outcome.startswith("ALARM")
            cells.append(outcome)
        print(f"| {case.name} | {case.package} | " + " | ".join(cells) + " |", flush=True)
    if not options.only or options.frameworks:
        print("\n| training set-up | outcome |\n| --- | --- |")
        for name, package, run in FRAMEWORK_RUNS:
            outcome = run_framework(run) if _available(package) else "skipped"
            runs += outcome != "skipped"
            alarms += outcome.startswith("ALARM")
            print(f"| {name} | {outcome} |", flush=True)
    print(f"\n{runs} runs, {alarms} alarms, {time.perf_counter() - started:.0f} s")
    return 1 if alarms else 0


if __name__ == "__main__":
    sys.exit(main())
