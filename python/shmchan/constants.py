# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The shmchan authors
"""Request and event types of the main module (gr_api.h) and of the shm
module (gr_shm.h), and the sizes the Python API relies on. Needs no
library: "import shmchan.constants" works wherever Python does.

python/tests/test_layout.py compares every value here with the C headers'.
"""


def msg_type(module, msg_id):
    """GR_MSG_TYPE(module, id): the 32-bit type of a request or an event."""
    return ((module & 0xFFFF) << 16) | (msg_id & 0xFFFF)


GR_API_VERSION = 1
GR_API_MAX_MSG_LEN = 128 * 1024
GR_API_DEFAULT_SOCK_PATH = "/run/shmchand.sock"
GR_PING2_LEN = 64
GR_EVENT_ALL = 0xFFFFFFFF

# Main module, numbered as in Grout.
GR_MAIN_MODULE = 0xCAFE
GR_HELLO = msg_type(GR_MAIN_MODULE, 0x1981)
GR_LOG_PACKETS_SET = msg_type(GR_MAIN_MODULE, 0x1982)
GR_LOG_LEVEL_LIST = msg_type(GR_MAIN_MODULE, 0x1983)
GR_LOG_LEVEL_SET = msg_type(GR_MAIN_MODULE, 0x1984)
GR_EVENT_SUBSCRIBE = msg_type(GR_MAIN_MODULE, 0x1985)
GR_EVENT_UNSUBSCRIBE = msg_type(GR_MAIN_MODULE, 0x1986)
GR_PING = msg_type(GR_MAIN_MODULE, 0x1987)
GR_PING2 = msg_type(GR_MAIN_MODULE, 0x1988)

# Shared-memory module.
GR_SHM_MODULE = 0x5348
GR_SHM_ATTACH = msg_type(GR_SHM_MODULE, 0x0001)
GR_SHM_STATS = msg_type(GR_SHM_MODULE, 0x0002)
GR_SHM_CHANNEL_LIST = msg_type(GR_SHM_MODULE, 0x0003)
GR_SHM_DAEMON_INFO = msg_type(GR_SHM_MODULE, 0x0004)
GR_SHM_ECHO = msg_type(GR_SHM_MODULE, 0x0005)
GR_SHM_CLIENT_LIST = msg_type(GR_SHM_MODULE, 0x0006)
GR_SHM_EVENT_SUBSCRIBE = msg_type(GR_SHM_MODULE, 0x0007)
GR_SHM_EVENT_PUBLISH = msg_type(GR_SHM_MODULE, 0x0008)
GR_SHM_EVENT_STATS = msg_type(GR_SHM_MODULE, 0x0009)
GR_SHM_DETACH = msg_type(GR_SHM_MODULE, 0x0010)
GR_SHM_TYPE_LIST = msg_type(GR_SHM_MODULE, 0x000A)
GR_SHM_TYPE_STATS = msg_type(GR_SHM_MODULE, 0x0020)
GR_SHM_TRACE_SET = msg_type(GR_SHM_MODULE, 0x0021)
GR_SHM_TRACE_DUMP = msg_type(GR_SHM_MODULE, 0x0022)
GR_SHM_TRACE_INFO = msg_type(GR_SHM_MODULE, 0x0023)

# struct gr_shm_trace_set_req.flags (GR_SHM_TRACE_SET).
GR_SHM_TRACE_ON = 1 << 0
GR_SHM_TRACE_CAPTURE = 1 << 1
GR_SHM_TRACE_CLEAR = 1 << 2

# struct gr_shm_client_info.transport (GR_SHM_CLIENT_LIST).
GR_SHM_TRANSPORT_SOCKET = 1
GR_SHM_TRANSPORT_SHM = 2

# struct gr_shm_event_channel.backing and the channel name's room.
GR_SHM_BACKING_MEMFD = 1 << 0
GR_SHM_BACKING_MEMZONE = 1 << 1
GR_SHM_NAME_LEN = 32

# struct gr_shm_event_channel_detached.reason: why a channel ended.
GR_SHM_DETACH_LEASE = 1
GR_SHM_DETACH_CORRUPT = 2
GR_SHM_DETACH_SLOW = 3
GR_SHM_DETACH_REQUEST = 4

# Events of the shm module (shmchan.Event decodes their payloads).
GR_SHM_EVENT_CHANNEL_ATTACHED = msg_type(GR_SHM_MODULE, 0x8001)
GR_SHM_EVENT_CHANNEL_DETACHED = msg_type(GR_SHM_MODULE, 0x8002)
GR_SHM_EVENT_LOST = msg_type(GR_SHM_MODULE, 0x8003)
GR_SHM_EVENT_TEST = msg_type(GR_SHM_MODULE, 0x8004)

# Log entries of GR_LOG_LEVEL_LIST.
GR_LOG_NAME_LEN = 64
GR_LOG_LEVEL_MIN = 1
GR_LOG_LEVEL_MAX = 8
