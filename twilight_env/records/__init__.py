"""Game records, deal files and the printed deal and replay logs.

The record format's functions are importable from here (``from twilight_env import
records``; ``records.replay(rec)``), as from their module
:mod:`twilight_env.records.game_records`.
"""

from twilight_env.records.game_records import (  # noqa: F401
    MAX_AGENT_CHARS, DamagedRecordsError, PartialRecordsError, RecordError, RecordFileError, RecordWriter,
    TruncatedRecordsError, actions_of_history, check_record_file,
    check_records_folder, deal_record, dump, dump_many, env_config, load, load_any, load_many, match_record,
    replay, to_env_options, to_match, validate)

__all__ = ["MAX_AGENT_CHARS", "DamagedRecordsError", "PartialRecordsError", "RecordError", "RecordFileError",
           "RecordWriter", "TruncatedRecordsError", "actions_of_history",
           "check_record_file", "check_records_folder", "deal_record", "dump", "dump_many", "env_config", "load",
           "load_any", "load_many", "match_record", "replay", "to_env_options", "to_match", "validate"]
