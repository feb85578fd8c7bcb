/*
 * torchfloor.h - the oldest PyTorch a project says it supports.
 *
 * A fix that rewrites code to an API newer than that (torch.amp.GradScaler
 * with a device argument needs PyTorch 2.3) would break the project on the
 * versions it declares, so it is offered as unsafe. The floor is read from
 * the files a project declares its dependencies in, nearest to the linted
 * file first: requirements*.txt, pyproject.toml, setup.cfg, setup.py and
 * environment.yml in its directory and the directories above it, up to the
 * repository's root (a directory holding .git) or eight levels.
 */
#ifndef OL_TORCHFLOOR_H
#define OL_TORCHFLOOR_H

#include <stdbool.h>
#include <stddef.h>

/* The lowest torch version (major * 100 + minor, 2.3 -> 203) the project of
 * the file at `path` allows, from the first dependency file that names
 * torch with a lower bound (`torch>=2.1`, `torch==2.4.0`, `torch~=2.2`,
 * `torch = ">=2.3"`); 0 when no such file, or torch without a lower bound
 * (any version: unknown). */
unsigned ol_torch_floor(const char *path);
/* The same, on the text of one dependency file (for tests): 0 when it
 * names no lower bound of torch. */
unsigned ol_torch_floor_in_text(const char *text, size_t len);

#endif
