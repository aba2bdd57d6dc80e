"""Search static schedules for NPU engines."""
