"""Retrieval over literature and engine manuals: loaders (PDF, HTML, Markdown, text, JATS) ->
sections -> chunks -> FAISS index of all-MiniLM-L6-v2 embeddings (JSON sidecar) -> cited passages.
Knows nothing of agents or the graph; agents/knowledge.py is the graph-facing part."""
