// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// shmchand's options: the help text, the parsing of each value, and what
// is said about an option getopt does not take (most often one of EAL's,
// given before --).

#include "eal_args.h"
#include "eal_exit.h"
#include "options.h"
#include "shmchand.h"

#include <gr_api_server.h>

#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

void usage(const struct gr_api_server_conf *d) {
	printf("Usage: shmchand [OPTIONS] [-- EAL_ARGS...]\n"
	       "\n"
	       "Serve the shmchan control API on a Unix socket and on shared-memory channels.\n"
	       "\n"
	       "Options:\n"
	       "  -s, --socket PATH          Unix socket path (default %s). Never abstract.\n"
	       "  -m, --socket-mode MODE     Octal permissions of the socket (default %04o).\n"
	       "  -g, --socket-group GROUP   Group name or gid of the socket (default: "
	       "unchanged).\n"
	       "  -p, --pollers N            Poller threads serving channels, 1..%d (default %d).\n"
	       "  -S, --spin-us US           Microseconds a poller spins before it sleeps, after\n"
	       "                             work that came within as long of the work before\n"
	       "                             (default %d, 0: always sleep, at most %d).\n"
	       "      --poller-nice N|off    Lowest nice value a poller takes, -20..19 (default\n"
	       "                             %d): it weighs as much as itself and the clients it\n"
	       "                             serves (3 below the daemon's for one, 13 for 16).\n"
	       "                             Needs CAP_SYS_NICE or RLIMIT_NICE below 0; without,\n"
	       "                             the pollers keep the daemon's and it logs why.\n"
	       "                             off: leave them at the daemon's.\n"
	       "      --no-shm               Offer no shared-memory channel; clients stay on the\n"
	       "                             socket.\n"
	       "      --max-conn-per-pid N   Socket connections one client process may hold\n"
	       "                             (default %d, 0: no limit, at most %d); more are\n"
	       "                             refused with EMFILE.\n"
	       "      --max-conn-per-uid N   Socket connections the processes of one uid other\n"
	       "                             than root may hold together (default %d, 0: no\n"
	       "                             limit); more are refused with EUSERS. Of the %d\n"
	       "                             connections served, the last %d are root's alone:\n"
	       "                             other users past them, anyone past %d: ENFILE.\n"
	       "      --hugepages MODE       auto, on or off (default auto).\n"
	       "                               on:   use hugepages; fail if EAL cannot.\n"
	       "                               off:  run EAL with --no-huge -m %s; memfd channels\n"
	       "                                     only, no DPDK secondary can attach.\n"
	       "                               auto: on if more than %d 2 MB hugepages are free "
	       "and\n"
	       "                                     hugetlbfs is mounted and writable by this\n"
	       "                                     user, else off (and it logs why).\n"
	       "      --telemetry            Run DPDK telemetry and serve /shmchan/info,\n"
	       "                             /shmchan/clients, /shmchan/stats and\n"
	       "                             /shmchan/types on its socket (default off).\n"
	       "      --event-backlog N      Events queued per subscriber before it loses events,\n"
	       "                             1..%u (default %u).\n"
	       "      --event-backlog-bytes N\n"
	       "                             Bytes of events queued per subscriber, %d..%zu\n"
	       "                             (default %zu). An event larger is always lost.\n"
	       "      --event-memory N       Bytes of events all subscribers' backlogs hold\n"
	       "                             together, each event counted once,\n"
	       "                             %d..%zu (default %zu).\n"
	       "                             Past it the largest holders give back their\n"
	       "                             newest events, so that readers get theirs.\n"
	       "      --event-subscriptions N\n"
	       "                             Event subscriptions one connection may hold,\n"
	       "                             1..%u (default %u); more are refused with\n"
	       "                             ENOSPC.\n"
	       "      --trace-size N         Requests the API trace keeps, the newest,\n"
	       "                             0..%u (default %u; 0: no trace). Its memory,\n"
	       "                             192 bytes each, is taken at the first\n"
	       "                             'shmchanctl trace on'.\n"
	       "  -v, --verbose              Debug log level.\n"
	       "  -V, --version              Show the version and exit.\n"
	       "  -h, --help                 Show this help and exit.\n"
	       "\n"
	       "Everything after -- goes to rte_eal_init(). Before it shmchand puts its own\n"
	       "defaults, each only if that option is not given after --:\n"
	       "  --file-prefix %s     (as root; for another user %s-UID)\n"
	       "  -l 0                       (unless -l, -c or --lcores is given)\n"
	       "  --no-pci                   (unless --no-pci, -a or --allow is given)\n"
	       "  --no-telemetry             (--telemetry without shmchand's --telemetry; unless\n"
	       "                             --telemetry or --no-telemetry is given)\n"
	       "  --no-huge -m %s            (--hugepages off, or auto without hugepages; unless\n"
	       "                             --no-huge or --in-memory is given; -m unless -m or\n"
	       "                             --socket-mem is given)\n"
	       "  -m %s                      (with hugepages, unless -m or --socket-mem is given:\n"
	       "                             reserved at startup for memzone channels)\n"
	       "and always --log-level=lib.eal:notice (--log-level=shmchand:debug with -v);\n"
	       "later --log-level options override it.\n"
	       "\n"
	       "DPDK secondaries: a client attaching to a memzone channel runs as a DPDK\n"
	       "secondary with the daemon's --file-prefix and an lcore id of its own (for\n"
	       "example --lcores='1@(0,1)'). While a secondary of an old daemon is alive, no\n"
	       "new daemon can start on the same file prefix.\n"
	       "\n"
	       "SIGINT or SIGTERM stops the daemon: it closes every client, removes the socket,\n"
	       "removes the hugepage files and EAL runtime folder of its file prefix once no\n"
	       "DPDK secondary maps them (it waits %d s for them), and exits 0, within 5 s\n"
	       "whatever a secondary did: if one died inside EAL's memory hotplug lock, the\n"
	       "daemon skips EAL's cleanup after %d s and says so. Another daemon answering\n"
	       "on the socket is found before EAL starts, so that a failed start creates\n"
	       "nothing.\n"
	       "\n"
	       "Exit status: 0 after SIGINT or SIGTERM, 1 on any startup error (the reason on\n"
	       "standard error).\n"
	       "\n"
	       "Example:\n"
	       "  shmchand -s /tmp/x.sock -p 2 -- --file-prefix hx\n"
	       "See shmchand(8).\n",
	       d->sock_path,
	       (unsigned)d->sock_mode,
	       GR_API_SERVER_MAX_POLLERS,
	       d->pollers,
	       d->spin_us,
	       GR_API_SERVER_SPIN_US_MAX,
	       (int)d->poller_nice,
	       d->max_conn_per_pid,
	       GR_API_SERVER_MAX_CLIENTS,
	       d->max_conn_per_uid,
	       GR_API_SERVER_MAX_CLIENTS,
	       GR_API_SERVER_ROOT_RESERVED,
	       GR_API_SERVER_MAX_CLIENTS,
	       NO_HUGE_MEM_MB,
	       HUGEPAGES_AUTO_MIN_FREE,
	       GR_API_SERVER_EVENT_BACKLOG_MSGS_MAX,
	       d->event_backlog_msgs,
	       GR_API_SERVER_EVENT_BYTES_MIN,
	       GR_API_SERVER_EVENT_BACKLOG_BYTES_MAX,
	       d->event_backlog_bytes,
	       GR_API_SERVER_EVENT_BYTES_MIN,
	       GR_API_SERVER_EVENT_MEMORY_BYTES_MAX,
	       d->event_memory_bytes,
	       GR_API_SERVER_EVENT_SUBS_MAX,
	       d->event_subs_max,
	       GR_API_SERVER_TRACE_SIZE_MAX,
	       d->trace_size,
	       DEFAULT_FILE_PREFIX,
	       DEFAULT_FILE_PREFIX,
	       NO_HUGE_MEM_MB,
	       HUGE_MEM_MB,
	       SECONDARY_EXIT_WAIT_MS / 1000,
	       EAL_LOCK_EXIT_WAIT_MS / 1000);
}

static int parse_uint(const char *arg, int base, unsigned long max, unsigned long *value) {
	char *end;

	errno = 0;
	*value = strtoul(arg, &end, base);
	if (errno != 0 || end == arg || *end != '\0' || arg[0] == '-' || *value > max)
		return -EINVAL;
	return 0;
}

// A decimal value of option name in min..max; else say why. Returns 0 or
// -EINVAL.
static int parse_range(
	const char *name,
	const char *arg,
	unsigned long min,
	unsigned long max,
	unsigned long *value
) {
	if (parse_uint(arg, 10, max, value) < 0 || *value < min) {
		fprintf(stderr, "shmchand: %s must be %lu..%lu, not '%s'\n", name, min, max, arg);
		return -EINVAL;
	}
	return 0;
}

// A nice value, -20..19, or "off" (GR_API_SERVER_NICE_OFF).
static int parse_nice(const char *arg, int32_t *nice) {
	char *end;
	long value;

	if (strcmp(arg, "off") == 0) {
		*nice = GR_API_SERVER_NICE_OFF;
		return 0;
	}
	// strtol() would take leading blanks and a '+'.
	if (arg[0] != '-' && (arg[0] < '0' || arg[0] > '9'))
		return -EINVAL;
	errno = 0;
	value = strtol(arg, &end, 10);
	if (errno != 0 || end == arg || *end != '\0' || value < -20 || value > 19)
		return -EINVAL;
	*nice = (int32_t)value;
	return 0;
}

static int parse_group(const char *arg, gid_t *gid) {
	const struct group *gr = getgrnam(arg);
	unsigned long value;

	if (gr != NULL) {
		*gid = gr->gr_gid;
		return 0;
	}
	if (parse_uint(arg, 10, (gid_t)-1 - 1, &value) < 0)
		return -EINVAL;
	*gid = (gid_t)value;
	return 0;
}

enum {
	OPT_NO_SHM = 256,
	OPT_HUGEPAGES,
	OPT_MAX_CONN_PER_PID,
	OPT_MAX_CONN_PER_UID,
	OPT_TELEMETRY,
	OPT_EVENT_BACKLOG,
	OPT_EVENT_BACKLOG_BYTES,
	OPT_EVENT_MEMORY,
	OPT_EVENT_SUBSCRIPTIONS,
	OPT_POLLER_NICE,
	OPT_TRACE_SIZE,
};

static const struct option long_options[] = {
	{"socket", required_argument, NULL, 's'},
	{"socket-mode", required_argument, NULL, 'm'},
	{"socket-group", required_argument, NULL, 'g'},
	{"pollers", required_argument, NULL, 'p'},
	{"spin-us", required_argument, NULL, 'S'},
	{"poller-nice", required_argument, NULL, OPT_POLLER_NICE},
	{"no-shm", no_argument, NULL, OPT_NO_SHM},
	{"hugepages", required_argument, NULL, OPT_HUGEPAGES},
	{"max-conn-per-pid", required_argument, NULL, OPT_MAX_CONN_PER_PID},
	{"max-conn-per-uid", required_argument, NULL, OPT_MAX_CONN_PER_UID},
	{"telemetry", no_argument, NULL, OPT_TELEMETRY},
	{"event-backlog", required_argument, NULL, OPT_EVENT_BACKLOG},
	{"event-backlog-bytes", required_argument, NULL, OPT_EVENT_BACKLOG_BYTES},
	{"event-memory", required_argument, NULL, OPT_EVENT_MEMORY},
	{"event-subscriptions", required_argument, NULL, OPT_EVENT_SUBSCRIPTIONS},
	{"trace-size", required_argument, NULL, OPT_TRACE_SIZE},
	{"verbose", no_argument, NULL, 'v'},
	{"version", no_argument, NULL, 'V'},
	{"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0},
};

// Options of DPDK 22.11's EAL that shmchand does not have, long and short
// (-m, -s, -S and -v are shmchand's own): given before --, they are most
// likely meant for EAL.
static const char *const eal_long_options[] = {
	"allow",
	"base-virtaddr",
	"block",
	"create-uio-dev",
	"file-prefix",
	"huge-dir",
	"huge-unlink",
	"in-memory",
	"iova-mode",
	"lcores",
	"legacy-mem",
	"log-level",
	"main-lcore",
	"match-allocations",
	"no-hpet",
	"no-huge",
	"no-pci",
	"no-shconf",
	"no-telemetry",
	"proc-type",
	"single-file-segments",
	"socket-limit",
	"socket-mem",
	"syslog",
	"vdev",
	"vfio-intr",
	"vfio-vf-token",
};
#define EAL_SHORT_OPTIONS "abcdlnr"

// Say what is wrong with an option getopt did not take: arg is the argument
// that holds it, short_opt the letter of a short one; an option of EAL's
// gets a hint that EAL's options go after --.
static void option_unknown(const char *arg, int short_opt) {
	size_t len;

	if (strncmp(arg, "--", 2) != 0) {
		if (strchr("smgpS", short_opt) != NULL)
			fprintf(stderr, "shmchand: option -%c needs a value\n", short_opt);
		else if (strchr(EAL_SHORT_OPTIONS, short_opt) != NULL)
			fprintf(stderr,
				"shmchand: -%c is an EAL option: put EAL options after --, as in"
				" 'shmchand [OPTIONS] -- -%c ...'\n",
				short_opt,
				short_opt);
		else
			fprintf(stderr, "shmchand: unknown option -%c\n", short_opt);
		return;
	}
	len = strcspn(arg + 2, "=");
	for (size_t i = 0; i < sizeof(eal_long_options) / sizeof(eal_long_options[0]); i++) {
		if (strlen(eal_long_options[i]) == len &&
		    strncmp(arg + 2, eal_long_options[i], len) == 0) {
			fprintf(stderr,
				"shmchand: --%s is an EAL option: put EAL options after --, as in"
				" 'shmchand [OPTIONS] -- --%s ...'\n",
				eal_long_options[i],
				eal_long_options[i]);
			return;
		}
	}
	for (size_t i = 0; long_options[i].name != NULL; i++) {
		if (strlen(long_options[i].name) == len &&
		    strncmp(arg + 2, long_options[i].name, len) == 0) {
			fprintf(stderr,
				"shmchand: --%s %s\n",
				long_options[i].name,
				long_options[i].has_arg == required_argument ? "needs a value"
									     : "takes no value");
			return;
		}
	}
	fprintf(stderr, "shmchand: unknown option '%s'\n", arg);
}

int parse_options(int argc, char **argv) {
	struct gr_api_server_conf *srv = &shmchand_config.server;
	struct shmchand_config *cfg = &shmchand_config;
	unsigned long value;
	int opt;

	// Unknown options are reported by option_unknown(), not by getopt.
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "s:m:g:p:S:vVh", long_options, NULL)) != -1) {
		switch (opt) {
		case 's':
			srv->sock_path = optarg;
			break;
		case 'm':
			if (parse_uint(optarg, 8, 07777, &value) < 0) {
				fprintf(stderr,
					"shmchand: -m/--socket-mode takes an octal mode, not "
					"'%s'\n",
					optarg);
				return -EINVAL;
			}
			srv->sock_mode = (mode_t)value;
			break;
		case 'g':
			if (parse_group(optarg, &srv->sock_gid) < 0) {
				fprintf(stderr,
					"shmchand: -g/--socket-group: unknown group '%s'\n",
					optarg);
				return -EINVAL;
			}
			break;
		case 'p':
			if (parse_uint(optarg, 10, GR_API_SERVER_MAX_POLLERS, &value) < 0 ||
			    value == 0) {
				fprintf(stderr,
					"shmchand: -p/--pollers must be 1..%d, not '%s'\n",
					GR_API_SERVER_MAX_POLLERS,
					optarg);
				return -EINVAL;
			}
			srv->pollers = (unsigned)value;
			break;
		case 'S':
			if (parse_uint(optarg, 10, GR_API_SERVER_SPIN_US_MAX, &value) < 0) {
				fprintf(stderr,
					"shmchand: -S/--spin-us must be 0..%d (microseconds), not "
					"'%s'\n",
					GR_API_SERVER_SPIN_US_MAX,
					optarg);
				return -EINVAL;
			}
			srv->spin_us = (unsigned)value;
			break;
		case OPT_POLLER_NICE:
			if (parse_nice(optarg, &srv->poller_nice) < 0) {
				fprintf(stderr,
					"shmchand: --poller-nice takes -20..19 or off, not '%s'\n",
					optarg);
				return -EINVAL;
			}
			break;
		case OPT_NO_SHM:
			srv->shm_enabled = false;
			break;
		case OPT_MAX_CONN_PER_PID:
		case OPT_MAX_CONN_PER_UID:
			if (parse_uint(optarg, 10, GR_API_SERVER_MAX_CLIENTS, &value) < 0) {
				fprintf(stderr,
					"shmchand: %s must be 0..%d, not '%s'\n",
					opt == OPT_MAX_CONN_PER_PID ? "--max-conn-per-pid"
								    : "--max-conn-per-uid",
					GR_API_SERVER_MAX_CLIENTS,
					optarg);
				return -EINVAL;
			}
			if (opt == OPT_MAX_CONN_PER_PID)
				srv->max_conn_per_pid = (unsigned)value;
			else
				srv->max_conn_per_uid = (unsigned)value;
			break;
		case OPT_HUGEPAGES:
			if (strcmp(optarg, "auto") == 0) {
				cfg->hugepages = HUGEPAGES_AUTO;
			} else if (strcmp(optarg, "on") == 0) {
				cfg->hugepages = HUGEPAGES_ON;
			} else if (strcmp(optarg, "off") == 0) {
				cfg->hugepages = HUGEPAGES_OFF;
			} else {
				fprintf(stderr,
					"shmchand: --hugepages takes auto, on or off, not '%s'\n",
					optarg);
				return -EINVAL;
			}
			break;
		case OPT_TELEMETRY:
			srv->telemetry = true;
			break;
		case OPT_EVENT_BACKLOG:
			if (parse_range(
				    "--event-backlog",
				    optarg,
				    1,
				    GR_API_SERVER_EVENT_BACKLOG_MSGS_MAX,
				    &value
			    ) < 0)
				return -EINVAL;
			srv->event_backlog_msgs = (unsigned)value;
			break;
		case OPT_EVENT_BACKLOG_BYTES:
			if (parse_range(
				    "--event-backlog-bytes",
				    optarg,
				    GR_API_SERVER_EVENT_BYTES_MIN,
				    GR_API_SERVER_EVENT_BACKLOG_BYTES_MAX,
				    &value
			    ) < 0)
				return -EINVAL;
			srv->event_backlog_bytes = (size_t)value;
			break;
		case OPT_EVENT_MEMORY:
			if (parse_range(
				    "--event-memory",
				    optarg,
				    GR_API_SERVER_EVENT_BYTES_MIN,
				    GR_API_SERVER_EVENT_MEMORY_BYTES_MAX,
				    &value
			    ) < 0)
				return -EINVAL;
			srv->event_memory_bytes = (size_t)value;
			break;
		case OPT_EVENT_SUBSCRIPTIONS:
			if (parse_range(
				    "--event-subscriptions",
				    optarg,
				    1,
				    GR_API_SERVER_EVENT_SUBS_MAX,
				    &value
			    ) < 0)
				return -EINVAL;
			srv->event_subs_max = (unsigned)value;
			break;
		case OPT_TRACE_SIZE:
			if (parse_range(
				    "--trace-size",
				    optarg,
				    0,
				    GR_API_SERVER_TRACE_SIZE_MAX,
				    &value
			    ) < 0)
				return -EINVAL;
			srv->trace_size = (unsigned)value;
			break;
		case 'v':
			cfg->verbose = true;
			break;
		case 'V':
			return OPTIONS_VERSION;
		case 'h':
			return OPTIONS_HELP;
		default:
			option_unknown(argv[optind - 1], optopt);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr,
			"shmchand: unexpected argument '%s' (EAL arguments go after --)\n",
			argv[optind]);
		return -EINVAL;
	}
	return OPTIONS_RUN;
}
