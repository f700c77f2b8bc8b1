"""The LLM judge: judged checks and rubrics graded by a provider in judge mode, cached, calibrated, blind."""
