"""Layout of one case's pipeline graph (pure): stage boxes in columns by depth, arrows from
each upstream stage. The template draws it as SVG; every text goes through autoescaping."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

BOX_W, BOX_H, GAP_X, GAP_Y, PAD = 190, 52, 60, 18, 8


@dataclass(frozen=True)
class Node:
    stage_id: str
    verdict: str  # pass, fail, undecidable, or missing (no record for an upstream stage)
    failure_context: str | None
    x: int
    y: int


@dataclass(frozen=True)
class Edge:
    x1: int
    y1: int
    x2: int
    y2: int


@dataclass(frozen=True)
class Graph:
    nodes: list[Node]
    edges: list[Edge]
    width: int
    height: int


def _depths(stages: dict[str, dict]) -> dict[str, int]:
    """Longest dependency chain to each stage (unknown upstream stages sit in column 0)."""
    depth: dict[str, int] = {}

    def visit(stage_id: str, seen: frozenset) -> int:
        if stage_id in depth:
            return depth[stage_id]
        stage = stages.get(stage_id)
        if stage is None or stage_id in seen:
            return 0
        ups = [visit(u, seen | {stage_id}) + 1 for u in stage["depends_on"]]
        depth[stage_id] = max(ups, default=0)
        return depth[stage_id]

    for stage_id in stages:
        visit(stage_id, frozenset())
    return depth


def layout(pipeline: dict[str, Any]) -> Graph:
    stages = {s["stage_id"]: s for s in pipeline["stages"]}
    missing = sorted({u for s in stages.values() for u in s["depends_on"]} - set(stages))
    depth = _depths(stages) | dict.fromkeys(missing, 0)
    columns: dict[int, list[str]] = {}
    for stage_id in [*missing, *stages]:
        columns.setdefault(depth[stage_id], []).append(stage_id)
    where: dict[str, tuple[int, int]] = {}
    nodes = []
    for column, ids in sorted(columns.items()):
        for row, stage_id in enumerate(ids):
            x, y = PAD + column * (BOX_W + GAP_X), PAD + row * (BOX_H + GAP_Y)
            where[stage_id] = (x, y)
            stage = stages.get(stage_id)
            nodes.append(
                Node(
                    stage_id=stage_id or "(single stage)",
                    verdict=stage["verdict"] if stage else "missing",
                    failure_context=stage["failure_context"] if stage else None,
                    x=x,
                    y=y,
                )
            )
    edges = [
        Edge(
            where[u][0] + BOX_W,
            where[u][1] + BOX_H // 2,
            where[s][0],
            where[s][1] + BOX_H // 2,
        )
        for s, stage in stages.items()
        for u in stage["depends_on"]
    ]
    rows = max((len(ids) for ids in columns.values()), default=1)
    return Graph(
        nodes=nodes,
        edges=edges,
        width=2 * PAD + len(columns) * BOX_W + (len(columns) - 1) * GAP_X,
        height=2 * PAD + rows * BOX_H + (rows - 1) * GAP_Y,
    )
