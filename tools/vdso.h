/* tools/vdso.h - the vdso and perf's build-id cache, for "hwt record"
 * (record_sink.c): the library's (lib/decode/vdso.c) under short names. */
#ifndef HWT_TOOLS_VDSO_H
#define HWT_TOOLS_VDSO_H
#include "decode/vdso.h"

#define vdso_self hwt_vdso_self
#define elf_mem_build_id hwt_elf_mem_build_id
#define buildid_dir hwt_buildid_dir
#define vdso_cache_save hwt_vdso_cache_save
#endif
