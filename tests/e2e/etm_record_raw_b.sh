#!/bin/bash
# tests/e2e/etm_record_raw_b.sh - the second half of etm_record.sh's programs
# (raw): perf and hwt script against the truth (see etm_record.sh).
ETM_MODE=raw
ETM_PART=b
. "$(dirname "$0")/etm_record.sh"
