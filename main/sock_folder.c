// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026 The shmchan authors

// Whether the folder of the daemon's socket lets it create the socket.

#include "sock_folder.h"

#include <gr_api.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int sock_folder_check(const char *path) {
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	struct stat st;

	if (slash == NULL)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else if ((size_t)(slash - path) >= sizeof(dir))
		return 0; // sock_server_check() refuses a path this long
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	int found = stat(dir, &st);

	if (found < 0 || !S_ISDIR(st.st_mode)) {
		bool missing = found < 0 && errno == ENOENT;

		fprintf(stderr,
			"shmchand: cannot create the socket %s: %s %s; %schoose another socket path"
			" with -s PATH\n",
			path,
			dir,
			missing ? "does not exist" : "is not a folder",
			missing ? "create it, or " : "");
		return -ENOENT;
	}
	if (faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS) < 0) {
		fprintf(stderr,
			"shmchand: cannot create the socket %s: folder %s is not writable by uid %d"
			"%s\n",
			path,
			dir,
			(int)geteuid(),
			strcmp(path, GR_API_DEFAULT_SOCK_PATH) == 0
				? "; as a user other than root, choose a socket path with -s PATH,"
				  " for example -s \"$XDG_RUNTIME_DIR/shmchand.sock\""
				: "");
		return -EACCES;
	}
	return 0;
}
