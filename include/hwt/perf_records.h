/* hwt/perf_records.h - the perf ABI layouts hwt reads and writes.
 *
 * Layer: lib/perf.  Sources: <linux/perf_event.h> (kernel records, the
 * attr, the mmap control page) and perf's perf.data-file-format.txt (the
 * file header, feature sections and the records perf itself synthesizes:
 * AUXTRACE_INFO, AUXTRACE, ID_INDEX, FINISHED_ROUND, THREAD_MAP,
 * TIME_CONV).  Every layout hwt relies on is pinned by _Static_assert
 * (size and key offsets), so a header change breaks the build, not files.
 *
 * Records are host-endian (hwt only handles files of its own endianness;
 * the reader rejects byte-swapped files).  Variable parts (strings, the
 * AUXTRACE_INFO private array, the sample_id trailer) follow the fixed
 * structs below.
 */
#ifndef HWT_PERF_RECORDS_H
#define HWT_PERF_RECORDS_H

#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- kernel ABI pinned from linux/perf_event.h ---- */
_Static_assert(sizeof(struct perf_event_header) == 8, "perf_event_header");
_Static_assert(offsetof(struct perf_event_header, misc) == 4, "perf_event_header.misc");
_Static_assert(offsetof(struct perf_event_header, size) == 6, "perf_event_header.size");
_Static_assert(sizeof(struct perf_event_attr) >= PERF_ATTR_SIZE_VER7, "perf_event_attr size");
_Static_assert(offsetof(struct perf_event_attr, type) == 0, "attr.type");
_Static_assert(offsetof(struct perf_event_attr, size) == 4, "attr.size");
_Static_assert(offsetof(struct perf_event_attr, config) == 8, "attr.config");
_Static_assert(offsetof(struct perf_event_attr, sample_period) == 16, "attr.sample_period");
_Static_assert(offsetof(struct perf_event_attr, sample_type) == 24, "attr.sample_type");
_Static_assert(offsetof(struct perf_event_attr, read_format) == 32, "attr.read_format");
_Static_assert(offsetof(struct perf_event_attr, wakeup_events) == 48, "attr.wakeup_events");
_Static_assert(offsetof(struct perf_event_attr, bp_type) == 52, "attr.bp_type");
_Static_assert(offsetof(struct perf_event_attr, config1) == 56, "attr.config1");
_Static_assert(offsetof(struct perf_event_attr, config2) == 64, "attr.config2");
_Static_assert(offsetof(struct perf_event_attr, aux_watermark) == 104, "attr.aux_watermark");
_Static_assert(offsetof(struct perf_event_attr, aux_sample_size) == 112, "attr.aux_sample_size");

_Static_assert(offsetof(struct perf_event_mmap_page, data_head) == 1024, "mmap_page.data_head");
_Static_assert(offsetof(struct perf_event_mmap_page, data_tail) == 1032, "mmap_page.data_tail");
_Static_assert(offsetof(struct perf_event_mmap_page, data_offset) == 1040, "mmap_page.data_offset");
_Static_assert(offsetof(struct perf_event_mmap_page, data_size) == 1048, "mmap_page.data_size");
_Static_assert(offsetof(struct perf_event_mmap_page, aux_head) == 1056, "mmap_page.aux_head");
_Static_assert(offsetof(struct perf_event_mmap_page, aux_tail) == 1064, "mmap_page.aux_tail");
_Static_assert(offsetof(struct perf_event_mmap_page, aux_offset) == 1072, "mmap_page.aux_offset");
_Static_assert(offsetof(struct perf_event_mmap_page, aux_size) == 1080, "mmap_page.aux_size");
_Static_assert(offsetof(struct perf_event_mmap_page, time_shift) == 50, "mmap_page.time_shift");
_Static_assert(offsetof(struct perf_event_mmap_page, time_mult) == 52, "mmap_page.time_mult");
_Static_assert(offsetof(struct perf_event_mmap_page, time_zero) == 64, "mmap_page.time_zero");

/* ---- record types perf adds in files (perf.data-file-format.txt) ---- */
enum hwt_perf_user_record {
	HWT_PERF_RECORD_HEADER_ATTR = 64,	/* pipe mode: attr (attr.size bytes), u64 ids[] */
	HWT_PERF_RECORD_HEADER_EVENT_TYPE = 65, /* deprecated */
	/* pipe mode: u32 size; then size bytes of tracing data that
	 * header.size does not count */
	HWT_PERF_RECORD_HEADER_TRACING_DATA = 66,
	HWT_PERF_RECORD_HEADER_BUILD_ID = 67,
	HWT_PERF_RECORD_FINISHED_ROUND = 68,
	HWT_PERF_RECORD_ID_INDEX = 69,
	HWT_PERF_RECORD_AUXTRACE_INFO = 70,
	HWT_PERF_RECORD_AUXTRACE = 71,
	HWT_PERF_RECORD_AUXTRACE_ERROR = 72,
	HWT_PERF_RECORD_THREAD_MAP = 73,
	HWT_PERF_RECORD_CPU_MAP = 74,
	HWT_PERF_RECORD_STAT_CONFIG = 75,
	HWT_PERF_RECORD_STAT = 76,
	HWT_PERF_RECORD_STAT_ROUND = 77,
	HWT_PERF_RECORD_EVENT_UPDATE = 78,
	HWT_PERF_RECORD_TIME_CONV = 79,
	HWT_PERF_RECORD_HEADER_FEATURE = 80, /* pipe mode: u64 feature, its section */
	HWT_PERF_RECORD_COMPRESSED = 81,
	HWT_PERF_RECORD_FINISHED_INIT = 82,
};

/* Feature bits of the file header (HEADER_* in perf). */
enum hwt_perf_feature {
	HWT_FEAT_TRACING_DATA = 1,
	HWT_FEAT_BUILD_ID = 2,
	HWT_FEAT_HOSTNAME = 3,
	HWT_FEAT_OSRELEASE = 4,
	HWT_FEAT_VERSION = 5,
	HWT_FEAT_ARCH = 6,
	HWT_FEAT_NRCPUS = 7,
	HWT_FEAT_CPUDESC = 8,
	HWT_FEAT_CPUID = 9,
	HWT_FEAT_TOTAL_MEM = 10,
	HWT_FEAT_CMDLINE = 11,
	HWT_FEAT_EVENT_DESC = 12,
	HWT_FEAT_CPU_TOPOLOGY = 13,
	HWT_FEAT_NUMA_TOPOLOGY = 14,
	HWT_FEAT_BRANCH_STACK = 15,
	HWT_FEAT_PMU_MAPPINGS = 16,
	HWT_FEAT_GROUP_DESC = 17,
	HWT_FEAT_AUXTRACE = 18,
	HWT_FEAT_STAT = 19,
	HWT_FEAT_CACHE = 20,
	HWT_FEAT_SAMPLE_TIME = 21,
	/* hwt's own features (perf reads only the bits it knows, all below
	 * 64; bits from HWT_FEAT_HWT_FIRST on are hwt's):
	 * HWT_FATAL: the fatal signals that ended recorded threads, text
	 * lines "fatal pid=P tid=T signal=S\n" (hwt record) */
	HWT_FEAT_HWT_FIRST = 192,
	HWT_FEAT_HWT_FATAL = 192,
	HWT_FEAT_BITS = 256,
};

/* ---- file layout ---- */
#define HWT_PERF_MAGIC2 0x32454c4946524550ULL /* "PERFILE2" read as a host u64 */

struct hwt_perf_file_section {
	uint64_t offset, size;
};
_Static_assert(sizeof(struct hwt_perf_file_section) == 16, "perf_file_section");

struct hwt_perf_file_header {
	uint64_t magic;
	uint64_t size;	    /* sizeof(struct hwt_perf_file_header) */
	uint64_t attr_size; /* bytes per entry of the attrs section */
	struct hwt_perf_file_section attrs;
	struct hwt_perf_file_section data;
	struct hwt_perf_file_section event_types; /* unused, zero */
	uint64_t features[HWT_FEAT_BITS / 64];	  /* adds_features bitmap */
};
_Static_assert(sizeof(struct hwt_perf_file_header) == 104, "perf_file_header");
_Static_assert(offsetof(struct hwt_perf_file_header, attrs) == 24, "perf_file_header.attrs");
_Static_assert(offsetof(struct hwt_perf_file_header, data) == 40, "perf_file_header.data");
_Static_assert(offsetof(struct hwt_perf_file_header, features) == 72, "perf_file_header.features");

/* One entry of the attrs section: an attr of attr_size bytes, then this. */
struct hwt_perf_file_attr_ids {
	struct hwt_perf_file_section ids; /* u64 ids */
};

/* ---- records (fixed parts) ---- */
struct hwt_perf_rec_mmap2 {
	struct perf_event_header header;
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	uint32_t maj, min;
	uint64_t ino, ino_generation;
	uint32_t prot, flags;
	/* char filename[] (NUL-terminated, padded to 8), sample_id */
};
_Static_assert(sizeof(struct hwt_perf_rec_mmap2) == 72, "mmap2");
_Static_assert(offsetof(struct hwt_perf_rec_mmap2, addr) == 16, "mmap2.addr");
_Static_assert(offsetof(struct hwt_perf_rec_mmap2, maj) == 40, "mmap2.maj");
_Static_assert(offsetof(struct hwt_perf_rec_mmap2, prot) == 64, "mmap2.prot");

struct hwt_perf_rec_mmap {
	struct perf_event_header header;
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	/* char filename[], sample_id */
};
_Static_assert(sizeof(struct hwt_perf_rec_mmap) == 40, "mmap");

struct hwt_perf_rec_comm {
	struct perf_event_header header;
	uint32_t pid, tid;
	/* char comm[] (NUL-terminated, padded to 8), sample_id */
};
_Static_assert(sizeof(struct hwt_perf_rec_comm) == 16, "comm");

struct hwt_perf_rec_fork { /* FORK and EXIT */
	struct perf_event_header header;
	uint32_t pid, ppid, tid, ptid;
	uint64_t time;
};
_Static_assert(sizeof(struct hwt_perf_rec_fork) == 32, "fork");
_Static_assert(offsetof(struct hwt_perf_rec_fork, time) == 24, "fork.time");

struct hwt_perf_rec_itrace_start {
	struct perf_event_header header;
	uint32_t pid, tid;
};
_Static_assert(sizeof(struct hwt_perf_rec_itrace_start) == 16, "itrace_start");

struct hwt_perf_rec_aux {
	struct perf_event_header header;
	uint64_t aux_offset, aux_size, flags; /* PERF_AUX_FLAG_* */
};
_Static_assert(sizeof(struct hwt_perf_rec_aux) == 32, "aux");
_Static_assert(offsetof(struct hwt_perf_rec_aux, flags) == 24, "aux.flags");

struct hwt_perf_rec_lost {
	struct perf_event_header header;
	uint64_t id, lost;
};
_Static_assert(sizeof(struct hwt_perf_rec_lost) == 24, "lost");

struct hwt_perf_rec_lost_samples {
	struct perf_event_header header;
	uint64_t lost;
};
_Static_assert(sizeof(struct hwt_perf_rec_lost_samples) == 16, "lost_samples");

/* SWITCH is a bare header (+ sample_id); SWITCH_CPU_WIDE adds this. */
struct hwt_perf_rec_switch_cpu_wide {
	struct perf_event_header header;
	uint32_t next_prev_pid, next_prev_tid;
};
_Static_assert(sizeof(struct hwt_perf_rec_switch_cpu_wide) == 16, "switch_cpu_wide");

struct hwt_perf_rec_auxtrace_info {
	struct perf_event_header header;
	uint32_t type; /* PERF_AUXTRACE_* of perf: 1 = intel_pt */
	uint32_t reserved;
	/* uint64_t priv[] */
};
_Static_assert(sizeof(struct hwt_perf_rec_auxtrace_info) == 16, "auxtrace_info");

/* AUXTRACE: header.size is the fixed part only; `size` payload bytes
 * (a multiple of 8, zero-padded) follow the record in the file. */
struct hwt_perf_rec_auxtrace {
	struct perf_event_header header;
	uint64_t size, offset, reference;
	uint32_t idx, tid, cpu, reserved;
};
_Static_assert(sizeof(struct hwt_perf_rec_auxtrace) == 48, "auxtrace");
_Static_assert(offsetof(struct hwt_perf_rec_auxtrace, idx) == 32, "auxtrace.idx");
_Static_assert(offsetof(struct hwt_perf_rec_auxtrace, cpu) == 40, "auxtrace.cpu");

struct hwt_perf_rec_auxtrace_error {
	struct perf_event_header header;
	uint32_t type, code, cpu, pid, tid, fmt;
	uint64_t ip;
	/* fmt >= 2: uint64_t time; then char msg[64] ... */
};
_Static_assert(sizeof(struct hwt_perf_rec_auxtrace_error) == 40, "auxtrace_error");

struct hwt_perf_id_index_entry {
	uint64_t id, idx, cpu, tid;
};
struct hwt_perf_rec_id_index {
	struct perf_event_header header;
	uint64_t nr;
	/* struct hwt_perf_id_index_entry entries[nr] */
};
_Static_assert(sizeof(struct hwt_perf_id_index_entry) == 32, "id_index_entry");
_Static_assert(sizeof(struct hwt_perf_rec_id_index) == 16, "id_index");

struct hwt_perf_thread_map_entry {
	uint64_t pid;
	char comm[16];
};
struct hwt_perf_rec_thread_map {
	struct perf_event_header header;
	uint64_t nr;
	/* struct hwt_perf_thread_map_entry entries[nr] */
};
_Static_assert(sizeof(struct hwt_perf_thread_map_entry) == 24, "thread_map_entry");
_Static_assert(sizeof(struct hwt_perf_rec_thread_map) == 16, "thread_map");

struct hwt_perf_rec_time_conv {
	struct perf_event_header header;
	uint64_t time_shift, time_mult, time_zero;
	/* perf >= 5.10 (cap_user_time_short): */
	uint64_t time_cycles, time_mask;
	uint8_t cap_user_time_zero, cap_user_time_short;
	uint8_t reserved[6];
};
_Static_assert(sizeof(struct hwt_perf_rec_time_conv) == 56, "time_conv");
_Static_assert(offsetof(struct hwt_perf_rec_time_conv, time_cycles) == 32, "time_conv.cycles");
_Static_assert(offsetof(struct hwt_perf_rec_time_conv, cap_user_time_zero) == 48, "time_conv.cap");

/* The sample_id trailer of non-sample records when attr.sample_id_all is
 * set; only the fields selected by attr.sample_type are present, in this
 * order: TID (pid, tid), TIME, ID, STREAM_ID, CPU (cpu, res), IDENTIFIER. */
struct hwt_perf_sample_id {
	uint32_t pid, tid;
	uint64_t time;
	uint64_t id;
	uint64_t stream_id;
	uint32_t cpu, res;
	uint64_t identifier;
};

/* ---- Intel PT's AUXTRACE_INFO private words (perf's intel-pt.h) ---- */
#define HWT_PERF_AUXTRACE_INTEL_PT 1
#define HWT_PERF_AUXTRACE_CS_ETM 3 /* perf's cs-etm.h metadata in the private words */
#define HWT_PERF_AUXTRACE_ARM_SPE 4 /* perf's arm-spe.h: PMU type, per-CPU mmaps */
enum hwt_intel_pt_priv {
	HWT_IPT_PMU_TYPE,
	HWT_IPT_TIME_SHIFT,
	HWT_IPT_TIME_MULT,
	HWT_IPT_TIME_ZERO,
	HWT_IPT_CAP_USER_TIME_ZERO,
	HWT_IPT_TSC_BIT,
	HWT_IPT_NORETCOMP_BIT,
	HWT_IPT_HAVE_SCHED_SWITCH,
	HWT_IPT_SNAPSHOT_MODE,
	HWT_IPT_PER_CPU_MMAPS,
	HWT_IPT_MTC_BIT,
	HWT_IPT_MTC_FREQ_BITS,
	HWT_IPT_TSC_CTC_N,
	HWT_IPT_TSC_CTC_D,
	HWT_IPT_CYC_BIT,
	HWT_IPT_MAX_NONTURBO_RATIO,
	HWT_IPT_FILTER_STR_LEN,
	HWT_IPT_PRIV_MAX /* then the filter string, padded to 8 */
};

/* ---- Intel BTS's AUXTRACE_INFO private words (perf's intel-bts.h) ----
 * perf 6.1 needs at least the words up to the snapshot mode's (5).  The
 * trace is a sequence of 24-byte records {u64 from, u64 to, u64 flags}
 * (flags bit 4: predicted), one per taken branch. */
#define HWT_PERF_AUXTRACE_INTEL_BTS 2
enum hwt_intel_bts_priv {
	HWT_IBTS_PMU_TYPE,
	HWT_IBTS_TIME_SHIFT,
	HWT_IBTS_TIME_MULT,
	HWT_IBTS_TIME_ZERO,
	HWT_IBTS_CAP_USER_TIME_ZERO,
	HWT_IBTS_SNAPSHOT_MODE,
	HWT_IBTS_PRIV_MAX
};

#ifdef __cplusplus
}
#endif
#endif /* HWT_PERF_RECORDS_H */
