"""Agent nodes of the simagent graph: query, planner, input_writer, error, runner, analysis, response."""
