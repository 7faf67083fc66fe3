/* hwt/error.h - the one error enum of libhwt.
 *
 * Every libhwt function that can fail returns a negative enum hwt_error
 * value (or 0 / a non-negative count on success).  hwt_errstr() gives a
 * short, stable text for each code; the texts of the codes that libipt
 * also has are the ones libipt's tools print, so that hwt's ptdump/ptxed
 * compatible output matches theirs.  Callers that report to a user add
 * context (what failed, on what, what to do); the library never prints.
 */
#ifndef HWT_ERROR_H
#define HWT_ERROR_H

#ifdef __cplusplus
extern "C" {
#endif

enum hwt_error {
	HWT_OK = 0,
	HWT_ERR_INTERNAL = -1,	     /* "internal error" */
	HWT_ERR_INVALID = -2,	     /* "invalid argument" */
	HWT_ERR_NOSYNC = -3,	     /* "no sync" (no PSB found) */
	HWT_ERR_BAD_OPC = -4,	     /* "unknown opcode" */
	HWT_ERR_BAD_PACKET = -5,     /* "unknown packet" */
	HWT_ERR_BAD_CONTEXT = -6,    /* "unexpected packet context" */
	HWT_ERR_EOS = -7,	     /* "reached end of trace stream" */
	HWT_ERR_BAD_QUERY = -8,	     /* "trace stream does not match query" */
	HWT_ERR_NOMEM = -9,	     /* "out of memory" */
	HWT_ERR_BAD_CONFIG = -10,    /* "bad configuration" */
	HWT_ERR_NOIP = -11,	     /* "no ip" */
	HWT_ERR_IP_SUPPRESSED = -12, /* "ip has been suppressed" */
	HWT_ERR_NOMAP = -13,	     /* "no memory mapped at this address" */
	HWT_ERR_BAD_INSN = -14,	     /* "unknown instruction" */
	HWT_ERR_NO_TIME = -15,	     /* "no timing information" */
	HWT_ERR_NO_CBR = -16,	     /* "no core:bus ratio" */
	HWT_ERR_BAD_IMAGE = -17,     /* "bad image" */
	HWT_ERR_BAD_LOCK = -18,	     /* "locking error" */
	HWT_ERR_NOT_SUPPORTED = -19, /* "not supported" */
	HWT_ERR_RETSTACK_EMPTY = -20, /* "compressed return without call" */
	HWT_ERR_BAD_RETCOMP = -21,   /* "bad return compression" */
	HWT_ERR_BAD_STATUS_UPDATE = -22, /* "bad status update" */
	HWT_ERR_NO_ENABLE = -23,     /* "expected tracing enabled event" */
	HWT_ERR_EVENT_IGNORED = -24, /* "event ignored" */
	HWT_ERR_OVERFLOW = -25,	     /* "overflow" */
	HWT_ERR_BAD_FILE = -26,	     /* "bad file" */
	HWT_ERR_BAD_CPU = -27,	     /* "unknown cpu" */
	HWT_ERR_NO_CALIBRATION = -28, /* "no calibration" (time) */
	/* hwt's own codes, beyond libipt's set. */
	HWT_ERR_IO = -64,	   /* "input/output error" (errno has detail) */
	HWT_ERR_BAD_FORMAT = -65,  /* "malformed file" (perf.data etc.) */
	HWT_ERR_NOT_PRESENT = -66, /* "trace unit not present" */
	HWT_ERR_BUSY = -67,	   /* "trace unit busy" */
	HWT_ERR_PERM = -68,	   /* "permission denied" */
	HWT_ERR_AGAIN = -69,	   /* "no data yet, try again" */
};

/* Short text for an error code (negative or positive); never NULL. */
const char *hwt_errstr(int err);

#ifdef __cplusplus
}
#endif
#endif /* HWT_ERROR_H */
