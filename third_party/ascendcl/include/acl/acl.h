/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's acl/acl.h: initialisation of AscendCL, the runtime header and the model
 * header (stream capture).  Declared from Huawei's public AscendCL documentation ("aclInit",
 * "aclFinalize"); text our own.
 */
#ifndef TB_STANDIN_ACL_ACL_H_
#define TB_STANDIN_ACL_ACL_H_

#include "acl_base.h"
#include "acl_mdl.h"
#include "acl_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Initialises AscendCL for the process; @p configPath (a JSON file) may be NULL.  A second
 *  call without aclFinalize returns ACL_ERROR_REPEAT_INITIALIZE, which callers may ignore
 *  (aclInit.md); one aclFinalize then ends both.  aclInit may follow aclFinalize again. */
ACL_FUNC_VISIBILITY aclError aclInit(const char *configPath);
/** Releases AscendCL's process resources (devices, streams, events, memory); a second call
 *  returns ACL_ERROR_REPEAT_FINALIZE. */
ACL_FUNC_VISIBILITY aclError aclFinalize(void);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACL_ACL_H_ */
