/* lib/core: pieces every layer uses (errors, version).  No state. */
#include "hwt/error.h"

const char *hwt_errstr(int err)
{
	if (err > 0)
		err = -err;
	switch ((enum hwt_error)err) {
	case HWT_OK: return "success";
	case HWT_ERR_INTERNAL: return "internal error";
	case HWT_ERR_INVALID: return "invalid argument";
	case HWT_ERR_NOSYNC: return "no sync";
	case HWT_ERR_BAD_OPC: return "unknown opcode";
	case HWT_ERR_BAD_PACKET: return "unknown packet";
	case HWT_ERR_BAD_CONTEXT: return "unexpected packet context";
	case HWT_ERR_EOS: return "reached end of trace stream";
	case HWT_ERR_BAD_QUERY: return "trace stream does not match query";
	case HWT_ERR_NOMEM: return "out of memory";
	case HWT_ERR_BAD_CONFIG: return "bad configuration";
	case HWT_ERR_NOIP: return "no ip";
	case HWT_ERR_IP_SUPPRESSED: return "ip has been suppressed";
	case HWT_ERR_NOMAP: return "no memory mapped at this address";
	case HWT_ERR_BAD_INSN: return "unknown instruction";
	case HWT_ERR_NO_TIME: return "no timing information";
	case HWT_ERR_NO_CBR: return "no core:bus ratio";
	case HWT_ERR_BAD_IMAGE: return "bad image";
	case HWT_ERR_BAD_LOCK: return "locking error";
	case HWT_ERR_NOT_SUPPORTED: return "not supported";
	case HWT_ERR_RETSTACK_EMPTY: return "compressed return without call";
	case HWT_ERR_BAD_RETCOMP: return "bad return compression";
	case HWT_ERR_BAD_STATUS_UPDATE: return "bad status update";
	case HWT_ERR_NO_ENABLE: return "expected tracing enabled event";
	case HWT_ERR_EVENT_IGNORED: return "event ignored";
	case HWT_ERR_OVERFLOW: return "overflow";
	case HWT_ERR_BAD_FILE: return "bad file";
	case HWT_ERR_BAD_CPU: return "unknown cpu";
	case HWT_ERR_NO_CALIBRATION: return "no calibration";
	case HWT_ERR_IO: return "input/output error";
	case HWT_ERR_BAD_FORMAT: return "malformed file";
	case HWT_ERR_NOT_PRESENT: return "trace unit not present";
	case HWT_ERR_BUSY: return "trace unit busy";
	case HWT_ERR_PERM: return "permission denied";
	case HWT_ERR_AGAIN: return "no data yet, try again";
	}
	return "unknown error";
}
