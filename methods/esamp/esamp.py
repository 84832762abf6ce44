"""ESamp (exploratory sampling) as a ``whitebox/`` method: ``-M method=esamp -M beta=0.1``.

Method (spec: ``shared/specs/methods.md``; the authors ship a vLLM plugin, LinesHogan/tLLM):
a small distiller ``D(x) = LN(x + ((x A) * SiLU(x G + b)) B)`` of rank 64 learns online to
predict a deep layer's hidden state from a shallow one's (the output of the first layer's
input norm -> the output of the last layer's input norm, the plugin's defaults). The
next-token logits are reweighted ``z' = (1 + beta) z - beta * lm_head(D(x))`` on the tokens
that survive top-k/top-p, so continuations the distiller already predicts well lose mass and
novel ones gain it.

Training as the plugin does it (``tllm/consumers/esamp``, per-request mode): one distiller
per *prompt*, shared by every sample drawn for that prompt (vLLM's ``n=16`` samples share a
``prompt_idx``); one AdamW step (lr 1e-3) per decode step on the MSE averaged over that
prompt's live rows; decode steps only (the prompt's positions never train it); ``A, G, B``
start at ``N(0, 0.02)``, the gate bias at 1. Sharing is what makes the error a novelty
signal *across* samples: once some samples of a prompt have gone one way, the distiller has
learnt that way and the other samples are pushed off it. Here rows whose rendered prompt is
the same text form one group (``share="prompt"``); ``share="row"`` gives each row its own
distiller (novelty only against its own prefix). Each group is seeded from its prompt's
text, so a reply depends on its prompt and on its sibling samples, never on which other
prompts share the batch. At ``beta = 0`` the logits are unchanged bit for bit and greedy
tokens equal the plain model's (tested).

    inspect eval benchmarks/probes/esamp_arith.py --model whitebox/qwen2.5-coder-0.5b \\
        -M method=esamp -M beta=0.1 -M batch_size=16
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from typing import Any, Literal

from harness.plugins.whitebox_method import Method, RequestState, StepView, whitebox_method

DEFAULT_BETA = 0.1
DEFAULT_RANK = 64
DEFAULT_LR = 1e-3
INIT_STD = 0.02
LOSS_WINDOW = 10
"""Steps averaged at each end of a distiller's loss curve (``esamp_loss_head``/``_tail``):
one step's loss is one token's error, too noisy to say whether the distiller learnt."""
CURVE_POINTS = 16
"""Points of the loss curve kept in each reply's metadata (means over equal step spans)."""

__all__ = ["DEFAULT_BETA", "DEFAULT_LR", "DEFAULT_RANK", "Distillers", "ESamp", "group_rows",
           "loss_summary"]


def group_rows(keys: Sequence[str]) -> tuple[list[int], list[str]]:
    """Row -> group index for rows sharing a key (first appearance order), and the keys."""
    order: dict[str, int] = {}
    rows = [order.setdefault(k, len(order)) for k in keys]
    return rows, list(order)


class Distillers:
    """Independent low-rank distillers, one per group, applied row-wise ``[batch, n, hidden]``.

    Parameters are stacked along a group axis and gathered per row, so rows of one group
    share (and jointly train) one distiller while groups never mix: each group's loss is its
    own mean and AdamW is element-wise.
    """

    def __init__(self, seeds: Sequence[int], rows: Sequence[int], hidden: int, rank: int,
                 lr: float, device: Any):
        import torch

        def init(seed: int) -> list[Any]:
            gen = torch.Generator(device="cpu").manual_seed(seed)
            return [
                torch.randn(hidden, rank, generator=gen) * INIT_STD,  # A
                torch.randn(hidden, rank, generator=gen) * INIT_STD,  # G
                torch.ones(rank),  # gate bias
                torch.randn(rank, hidden, generator=gen) * INIT_STD,  # B
                torch.ones(hidden),  # LN weight
                torch.zeros(hidden),  # LN bias
            ]

        groups = [init(int(s)) for s in seeds]
        self.params = [
            torch.stack([g[i] for g in groups]).to(device).requires_grad_(True) for i in range(6)
        ]
        self.optimizer = torch.optim.AdamW(self.params, lr=lr)
        self.rows = torch.tensor(list(rows), dtype=torch.long, device=device)
        self.groups = len(groups)
        self.hidden = hidden
        self.last_loss: list[float] = [float("nan")] * len(rows)
        self.first_loss: list[float] = [float("nan")] * len(rows)
        self.history: list[list[float]] = [[] for _ in range(self.groups)]
        """Per group, its loss at every step where it had live rows (the online error:
        each step's loss is measured before that step's update)."""
        self.steps = 0

    def __call__(self, x: Any) -> Any:
        """``x`` ``[batch, n, hidden]`` -> predictions of the same shape (row r uses its
        group's distiller)."""
        import torch

        a, g, b, up, weight, bias = (p.index_select(0, self.rows) for p in self.params)
        gate = torch.nn.functional.silu(torch.bmm(x, g) + b[:, None, :])
        y = x + torch.bmm(torch.bmm(x, a) * gate, up)
        y = torch.nn.functional.layer_norm(y, (self.hidden,))
        return y * weight[:, None, :] + bias[:, None, :]

    def step(self, x: Any, target: Any, mask: Any) -> None:
        """One AdamW step on each group's MSE, averaged over its rows' unmasked positions."""
        import torch

        with torch.enable_grad():
            err = ((self(x) - target) ** 2).mean(-1) * mask  # [batch, n]
            total = torch.zeros(self.groups, device=err.device).index_add(0, self.rows,
                                                                          err.sum(-1))
            count = torch.zeros(self.groups, device=err.device).index_add(0, self.rows,
                                                                          mask.sum(-1))
            per_group = total / count.clamp(min=1)
            self.optimizer.zero_grad()
            per_group.sum().backward()
            self.optimizer.step()
        losses = [float(v) for v in per_group.detach().index_select(0, self.rows)]
        for group, (loss, live) in enumerate(zip(per_group.tolist(), count.tolist(),
                                                 strict=True)):
            if live > 0:
                self.history[group].append(float(loss))
        if self.steps == 0:
            self.first_loss = losses
        self.last_loss = losses
        self.steps += 1


def loss_summary(history: Sequence[float], window: int = LOSS_WINDOW,
                 points: int = CURVE_POINTS) -> dict[str, Any]:
    """A distiller's loss curve in a few numbers: the mean of its first and last ``window``
    steps (``esamp_loss_head``/``esamp_loss_tail``; None with fewer than ``2 * window``
    steps, where the two ends would overlap), the number of trained steps and the curve as
    means over ``points`` equal spans of steps. Why: ``tail < head`` is whether the
    distiller learnt its prompt's continuations, which the novelty term needs."""
    n = len(history)
    enough = n >= 2 * window
    spans = [history[i * n // points:(i + 1) * n // points] for i in range(points)]
    return {
        "esamp_trained_steps": n,
        "esamp_loss_head": sum(history[:window]) / window if enough else None,
        "esamp_loss_tail": sum(history[-window:]) / window if enough else None,
        "esamp_loss_curve": [sum(s) / len(s) for s in spans if s],
    }


@whitebox_method("esamp")
class ESamp(Method):
    """Exploratory sampling: reweight logits away from what a shallow-to-deep distiller
    predicts. Options: ``beta`` (0 = plain model), ``rank``, ``lr``, ``share``
    (``prompt``: one distiller per prompt, as the paper; ``row``: one per request)."""

    name = "esamp"

    def __init__(
        self,
        beta: float = DEFAULT_BETA,
        rank: int = DEFAULT_RANK,
        lr: float = DEFAULT_LR,
        share: Literal["prompt", "row"] = "prompt",
    ) -> None:
        if share not in ("prompt", "row"):
            raise ValueError(f"share must be 'prompt' or 'row', not {share!r}")
        self.beta = float(beta)
        self.rank = int(rank)
        self.lr = float(lr)
        self.share = share
        self.capture_modules: tuple[str, ...] = ()

    def start(self, lm: Any, states: Sequence[RequestState]) -> None:
        """Name the two norms to capture and build one distiller per prompt (or row)."""
        last = lm.n_layers - 1
        self.capture_modules = ("model.layers.0.input_layernorm",
                                f"model.layers.{last}.input_layernorm")
        hidden = int(lm.model.config.hidden_size)
        if self.share == "prompt":
            rows, keys = group_rows([s.prompt for s in states])
            seeds = [zlib.crc32(k.encode("utf-8")) & 0x7FFFFFFF for k in keys]
        else:
            rows, seeds = list(range(len(states))), [s.seed for s in states]
        self._distillers = Distillers(seeds, rows, hidden, self.rank, self.lr, lm.device)
        self._head = lm.model.get_output_embeddings()

    def _pair(self, view: StepView) -> tuple[Any, Any]:
        shallow, deep = (view.captures[name].float() for name in self.capture_modules)
        return shallow, deep

    def _kept_logits(self, hidden: Any, rows: Any, tokens: Any) -> Any:
        """``lm_head(hidden)`` at the kept ``(row, token)`` pairs only: the plugin's
        ``post_filter_exact`` path, which skips the full-vocabulary projection (top-p keeps
        a handful of tokens out of ~150k)."""
        weight = self._head.weight.index_select(0, tokens)
        values = (hidden.index_select(0, rows).to(weight.dtype) * weight).sum(-1)
        bias = getattr(self._head, "bias", None)
        if bias is not None:
            values = values + bias.index_select(0, tokens)
        return values.float()

    def process_logits(
        self, lm: Any, logits: Any, view: StepView, states: Sequence[RequestState]
    ) -> Any:
        """``z' = (1 + beta) z - beta * lm_head(D(x))`` on kept tokens; then train on (x, y)
        of the live rows (the plugin trains after sampling too, off the critical path)."""
        import torch

        shallow, deep = self._pair(view)
        x, y = shallow[:, -1:], deep[:, -1:]
        out = logits
        if self.beta != 0.0:
            rows, tokens = view.keep.nonzero(as_tuple=True)
            predicted = self._kept_logits(self._distillers(x).detach()[:, -1], rows, tokens)
            out = logits.clone()
            out[rows, tokens] = (1 + self.beta) * logits[rows, tokens] - self.beta * predicted
        active = torch.tensor([[0.0 if s.done else 1.0] for s in states], device=x.device)
        self._distillers.step(x, y, active)
        return out

    def finish(self, lm: Any, states: Sequence[RequestState]) -> None:
        """Record in each output's metadata its distiller's first and last loss (the
        novelty signal falling as its prompt's samples are learnt) and how many rows shared
        that distiller (``n`` when an item's samples were decoded as one batch)."""
        d = self._distillers
        rows = d.rows.tolist()
        for state, first, last in zip(states, d.first_loss, d.last_loss, strict=True):
            state.data["metadata"] = {
                "esamp_beta": self.beta, "esamp_loss_first": first, "esamp_loss": last,
                "esamp_steps": d.steps, "esamp_group_rows": rows.count(rows[state.index]),
                **loss_summary(d.history[rows[state.index]]),
            }
        del self._distillers, self._head
