"""Multi-turn rollouts for the RL trainer: K whole game episodes per batch, verifier reward.

SCOUT's last stage is multi-turn RL from the SFT start: the model plays episodes of a game
task (``harness/scout``), each move a forced ``move`` call on a window of (rules, current
board) rendered exactly as ``whitebox/`` renders it (:func:`methods.scout.data.render_window`),
and the episode is rewarded by the verifier. :class:`EpisodeGroups` is a
:class:`~methods.rl.rollouts.RolloutSource` for :func:`methods.rl.trainer.train`, which is
unchanged; the fit:

* the trainer wants groups of rows sharing one prompt; a turn's prompt differs from turn
  to turn. So one batch is **one group**: every turn of the ``k`` episodes of one instance
  is a row, ``prompt_ids`` is the token prefix all those prompts share (the rules), and the
  rest of each turn's prompt (its board) sits in the row with mask 0, before the move's
  tokens (mask 1). Log-probs of the move are then exactly those under its own prompt.
* each row's reward is its episode's: 1 when solved, else ``progress`` x the share of the
  start's distance estimate (``game.potential``) removed at the end (0 for an invalid call,
  which ends the episode, as the task scores it a failure to act). GRPO's group mean is
  therefore over turns, not episodes: a long episode weighs more (stated, not corrected).

Determinism: batch ``index`` seeds the instance choice and the sampler.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Any

import torch

from methods.rl.policy import Policy
from methods.rl.rollouts import Batch, Group, fill_behaviour_logprobs

__all__ = ["Episode", "EpisodeGroups", "parse_move"]


def parse_move(text: str, arg: str, actions: tuple[str, ...]) -> str | None:
    """The action in a completion of the forced prefix (``"arg": "up"}}``), or None."""
    try:
        value = json.loads("{" + text.split("}", 1)[0] + "}").get(arg)
    except (json.JSONDecodeError, AttributeError):
        return None
    return value if value in actions else None


@dataclass
class Episode:
    """One played episode: per turn the prompt ids and the move's token ids."""

    prompts: list[list[int]]
    moves: list[list[int]]
    actions: list[str]
    solved: bool
    reward: float


class EpisodeGroups:
    """``k`` episodes of one seeded-chosen instance of a game task per batch."""

    def __init__(self, task: str, task_args: str, k: int, seed: int,
                 temperature: float = 1.0, max_new_tokens: int = 32,
                 progress: float = 0.5) -> None:
        from methods.scout.data import _arg_name, load_game_task

        if k < 2:
            raise ValueError("k must be >= 2: GRPO compares episodes within a group")
        built, self.simulator, self.tool = load_game_task(task, task_args)
        self.arg = _arg_name(self.tool)
        self.samples = list(built.dataset)
        if not self.samples:
            raise ValueError("the task has no instances to play")
        self.k, self.seed, self.temperature = k, seed, temperature
        self.max_new_tokens, self.progress = max_new_tokens, progress

    def _seed(self, index: int) -> int:
        return (self.seed * 1_000_003 + index * 7_919 + 29) % (2**63 - 1)

    def play(self, policy: Policy, sample: Any, gen: torch.Generator) -> Episode:
        """One episode of ``sample`` with ``policy`` sampling each move."""
        from methods.scout.data import render_window

        game = self.simulator(sample.metadata["spec"])
        system, board = sample.input[0].text, sample.input[1].text
        limit = int(sample.metadata["move_limit"])
        state: Any = game.initial()
        start = float(game.potential(state))
        ep = Episode([], [], [], False, 0.0)
        for _ in range(limit):
            text = render_window(system, board, self.tool, policy.tokenizer)
            ids = policy.tokenizer(text, add_special_tokens=False).input_ids
            out = policy.sample(ids, 1, self.max_new_tokens, gen, self.temperature)
            move = out.tokens[0][out.mask[0].bool()].tolist()
            ep.prompts.append([int(t) for t in ids])
            ep.moves.append([int(t) for t in move])
            action = parse_move(policy.decode(out.tokens[0], out.mask[0]), self.arg,
                                tuple(game.actions))
            if action is None:
                return ep  # an invalid call ends the episode with reward 0
            result = game.step(state, action)
            ep.actions.append(action)
            state = result.state
            board = game.observe(state, result.outcome)
            if result.done or game.solved(state):
                break
        ep.solved = bool(game.solved(state))
        gained = (start - float(game.potential(state))) / start if start > 0 else 0.0
        ep.reward = 1.0 if ep.solved else self.progress * max(gained, 0.0)
        return ep

    def collect(self, policy: Policy, index: int, policy_step: int) -> Batch:
        """Batch ``index``: ``k`` episodes of one instance, every turn a row (see above)."""
        sample = random.Random(self._seed(index)).choice(self.samples)
        gen = torch.Generator().manual_seed(self._seed(index))
        episodes = [self.play(policy, sample, gen) for _ in range(self.k)]
        rows = [(p, m, e.reward) for e in episodes for p, m in zip(e.prompts, e.moves,
                                                                     strict=True)]
        shared = rows[0][0]
        for p, _, _ in rows[1:]:
            n = 0
            while n < min(len(shared), len(p)) and shared[n] == p[n]:
                n += 1
            shared = shared[:n]
        shared = shared[:min(len(p) for p, _, _ in rows) - 1] or rows[0][0][:1]
        width = max(len(p) - len(shared) + len(m) for p, m, _ in rows)
        tokens = torch.full((len(rows), width), policy.pad_id, dtype=torch.long)
        mask = torch.zeros((len(rows), width))
        for i, (p, m, _) in enumerate(rows):
            rest = p[len(shared):] + m
            tokens[i, :len(rest)] = torch.tensor(rest, dtype=torch.long)
            mask[i, len(p) - len(shared):len(rest)] = 1.0
        rewards = torch.tensor([r for _, _, r in rows], dtype=torch.float64)
        group = Group(str(sample.id), list(shared), tokens, mask, rewards, None,
                      [" ".join(e.actions) for e in episodes])
        return fill_behaviour_logprobs(policy, Batch(index, policy_step, [group]))
