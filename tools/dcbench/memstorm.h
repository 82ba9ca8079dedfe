/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* memstorm.h - `dcbench memstorm`: the memory bound under 10 M names. */
#ifndef DCB_MEMSTORM_H
#define DCB_MEMSTORM_H

int dcb_memstorm_main(int argc, char **argv);

#endif
