"""Model groups: one model served by several targets (gpt-4o on OpenAI and on Azure), ranked against each
other by probes.readings.leaderboard. Registered with the app from probes.models."""
