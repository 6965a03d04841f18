"""The web front end (`simagent web`): chat, plan, review, answers and run files in the browser."""
