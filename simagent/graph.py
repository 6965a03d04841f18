"""The agent graph: query -> planner -> input_writer -> precheck -> review -> runner -> postcheck
-> analysis -> response, with clarify (interrupt) after query and repair loops back to the input
writer. Routing is in each node's Command[Literal[...]] return type."""

from __future__ import annotations

import enum
import inspect
import sqlite3
from pathlib import Path

from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from pydantic import BaseModel

from agents.analysis import analysis
from agents.error import postcheck, precheck
from agents.input_writer import input_writer
from agents.knowledge import knowledge
from agents.planner import planner
from agents.query import clarify, query
from agents.response import response
from agents.review import review
from agents.runner import runner
from agents.screen import screen
from simagent import models, state
from simagent.state import RunContext, RunState


def build_graph() -> StateGraph:
    graph = StateGraph(RunState, context_schema=RunContext)
    for node in (query, clarify, knowledge, screen, planner, input_writer, precheck, review, runner, postcheck,
                 analysis, response):
        graph.add_node(node.__name__, node)
    graph.add_edge(START, "query")
    graph.add_edge("response", END)
    return graph


def _checkpoint_types() -> list[tuple[str, str]]:
    """Our pydantic models and enums, allowed for checkpoint deserialisation."""
    allowed = []
    for module in (models, state):
        for name, obj in vars(module).items():
            if inspect.isclass(obj) and obj.__module__ == module.__name__ and issubclass(obj, BaseModel | enum.Enum):
                allowed.append((module.__name__, name))
    allowed.append(("simagent.models", "Quantity"))
    return allowed


def checkpointer(path: Path) -> SqliteSaver:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(str(path), check_same_thread=False)
    return SqliteSaver(conn, serde=JsonPlusSerializer(allowed_msgpack_modules=_checkpoint_types()))


def compile_graph(checkpoint_path: Path):
    return build_graph().compile(checkpointer=checkpointer(checkpoint_path))


__all__ = ["build_graph", "compile_graph", "RunContext", "RunState"]
