/* tools/lsan_suppress.c - LeakSanitizer suppressions of the hwt binary
 * (read only by ASan builds; harmless elsewhere).
 *
 * OpenCSD 1.x (Debian libopencsd 1.3) never frees the callback object
 * ocsd_dt_set_gen_elem_outfn allocates: 32 bytes per decode tree, one
 * tree per cs_etm AUX queue (lib/etm/tree.c).  Not ours to free (no API
 * takes it back), so not reported. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_options(void);

/* (no "Suppressions used" table on stderr) */
const char *__lsan_default_options(void)
{
	return "print_suppressions=0";
}

const char *__lsan_default_suppressions(void)
{
	return "leak:ocsd_dt_set_gen_elem_outfn\n";
}
