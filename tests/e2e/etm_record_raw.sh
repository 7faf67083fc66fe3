#!/bin/bash
# tests/e2e/etm_record_raw.sh - etm_record.sh with every program recorded
# raw (cs_etm/raw/: unformatted ETMv4 bytes, AUX records flagged 0x100,
# as ETE/TRBE systems write): perf and hwt script against the truth.
ETM_MODE=raw
. "$(dirname "$0")/etm_record.sh"
