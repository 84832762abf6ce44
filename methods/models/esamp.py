"""ESamp (exploratory sampling) as a ``whitebox/`` method: ``-M method=esamp -M beta=0.1``.

Method (spec: ``shared/specs/methods.md``; the authors ship a vLLM plugin, LinesHogan/tLLM):
a small distiller ``D(x) = LN(x + ((x A) * SiLU(x G + b)) B)`` of rank 64 learns online to
predict a deep layer's hidden state from a shallow one's (here: the output of the first
layer's input norm -> the output of the last layer's input norm). The next-token logits are
reweighted ``z' = (1 + beta) z - beta * lm_head(D(x))`` on the tokens that survive
top-k/top-p, so continuations the distiller already predicts well (the "obvious" ones) lose
mass and novel ones gain it. One optimiser step per decode step on the MSE between
``D(x)`` and the true deep state; the prompt's positions train it once at prefill.

Per request: each row of a batch owns its distiller (parameters stacked along the batch
axis, independent gradients, Adam is element-wise), initialised from the request's seed, so
a reply never depends on which other requests share its batch. At ``beta = 0`` the logits
are unchanged bit for bit and greedy tokens equal the plain model's (tested).

    inspect eval benchmarks/probes/esamp_arith.py --model whitebox/smollm2-135m \\
        -M method=esamp -M beta=0.1 --epochs 4
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from harness.models.hooks import Method, RequestState, StepView, whitebox_method

DEFAULT_BETA = 0.1
DEFAULT_RANK = 64
DEFAULT_LR = 1e-2

__all__ = ["DEFAULT_BETA", "DEFAULT_LR", "DEFAULT_RANK", "Distillers", "ESamp"]


class Distillers:
    """``batch`` independent low-rank distillers ``[batch, hidden] -> [batch, hidden]``."""

    def __init__(self, seeds: Sequence[int], hidden: int, rank: int, lr: float, device: Any):
        import torch

        def init(seed: int) -> list[Any]:
            gen = torch.Generator(device="cpu").manual_seed(seed)
            scale = hidden**-0.5
            return [
                torch.randn(hidden, rank, generator=gen) * scale,  # A
                torch.randn(hidden, rank, generator=gen) * scale,  # G
                torch.zeros(rank),  # b
                torch.zeros(rank, hidden),  # B: D starts as LN(x)
                torch.ones(hidden),  # LN weight
                torch.zeros(hidden),  # LN bias
            ]

        rows = [init(int(s)) for s in seeds]
        self.params = [
            torch.stack([r[i] for r in rows]).to(device).requires_grad_(True) for i in range(6)
        ]
        self.optimizer = torch.optim.Adam(self.params, lr=lr)
        self.hidden = hidden
        self.last_loss: list[float] = [float("nan")] * len(rows)

    def __call__(self, x: Any) -> Any:
        """``x`` ``[batch, n, hidden]`` -> predictions of the same shape."""
        import torch

        a, g, b, up, weight, bias = self.params
        gate = torch.nn.functional.silu(torch.bmm(x, g) + b[:, None, :])
        y = x + torch.bmm(torch.bmm(x, a) * gate, up)
        y = torch.nn.functional.layer_norm(y, (self.hidden,))
        return y * weight[:, None, :] + bias[:, None, :]

    def step(self, x: Any, target: Any, mask: Any) -> None:
        """One Adam step on the masked MSE; each row's loss is its own mean (rows don't mix)."""
        import torch

        with torch.enable_grad():
            err = ((self(x) - target) ** 2).mean(-1) * mask  # [batch, n]
            per_row = err.sum(-1) / mask.sum(-1).clamp(min=1)
            self.optimizer.zero_grad()
            per_row.sum().backward()
            self.optimizer.step()
        self.last_loss = [float(v) for v in per_row.detach()]


@whitebox_method("esamp")
class ESamp(Method):
    """Exploratory sampling: reweight logits away from what a shallow-to-deep distiller
    predicts. Options: ``beta`` (0 = plain model), ``rank``, ``lr``."""

    name = "esamp"

    def __init__(
        self, beta: float = DEFAULT_BETA, rank: int = DEFAULT_RANK, lr: float = DEFAULT_LR
    ) -> None:
        self.beta = float(beta)
        self.rank = int(rank)
        self.lr = float(lr)
        self.capture_modules: tuple[str, ...] = ()

    def start(self, lm: Any, states: Sequence[RequestState]) -> None:
        """Name the two norms to capture and build one distiller per request."""
        last = lm.n_layers - 1
        self.capture_modules = ("model.layers.0.input_layernorm",
                                f"model.layers.{last}.input_layernorm")
        hidden = int(lm.model.config.hidden_size)
        self._distillers = Distillers(
            [s.seed for s in states], hidden, self.rank, self.lr, lm.device
        )
        self._head = lm.model.get_output_embeddings()

    def _pair(self, view: StepView) -> tuple[Any, Any]:
        shallow, deep = (view.captures[name].float() for name in self.capture_modules)
        return shallow, deep

    def after_prefill(self, lm: Any, view: StepView, states: Sequence[RequestState]) -> Any:
        """Train once on the prompt's positions (all but the last, which step 1 uses)."""
        shallow, deep = self._pair(view)
        mask = view.attention_mask[:, :-1].float()
        if shallow.shape[1] > 1:
            self._distillers.step(shallow[:, :-1], deep[:, :-1], mask)
        return None

    def process_logits(
        self, lm: Any, logits: Any, view: StepView, states: Sequence[RequestState]
    ) -> Any:
        """``z' = (1 + beta) z - beta * lm_head(D(x))`` on kept tokens; then train on (x, y)."""
        import torch

        shallow, deep = self._pair(view)
        x, y = shallow[:, -1:], deep[:, -1:]
        predicted = self._head(self._distillers(x).detach())[:, -1].float()
        reweighted = (1 + self.beta) * logits - self.beta * predicted
        out = torch.where(view.keep, reweighted, logits)
        active = torch.tensor([[0.0 if s.done else 1.0] for s in states], device=x.device)
        self._distillers.step(x, y, active)
        return out

    def finish(self, lm: Any, states: Sequence[RequestState]) -> None:
        """Record each request's last distiller loss (goes to the output's metadata)."""
        for state, loss in zip(states, self._distillers.last_loss, strict=True):
            state.data["metadata"] = {"esamp_beta": self.beta, "esamp_loss": loss}
        del self._distillers, self._head
