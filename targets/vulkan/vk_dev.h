/*
 * vk_dev.h - a Vulkan compute device, with the loader opened at run time.
 *
 * libvulkan.so.1 is opened with dlopen on first use, so burncc links
 * nothing of Vulkan and runs its CPU tests without a loader; there every
 * call fails with BURN_ERR_UNSUPPORTED saying why.  One device per
 * process: $BURNCC_VULKAN_DEVICE (an index in the loader's order, or a
 * part of the device's name; "none": act as if there were none), else
 * the first discrete GPU, then
 * integrated, virtual, CPU (lavapipe), with a compute queue; the 8-, 16-
 * and 64-bit integer features the shaders use are required (a device
 * without one is refused, naming it), f64 is enabled where present.
 *
 * Memory: every buffer is host-visible and coherent, mapped for its
 * life (lavapipe's memory is all of that kind; on a discrete GPU this is
 * the slow path until staging buffers come).  Work is recorded into one
 * command buffer (vkd_cmd_*), a dispatch per shader with a compute ->
 * compute memory barrier between dispatches, submitted and waited for.
 *
 * Every failure is a status whose message names the device, the shader
 * or operation and Vulkan's result code; nothing aborts.  The device is
 * opened once under a mutex and kept until the process ends; the
 * objects made from it are the caller's to destroy.
 */
#ifndef BURN_VK_DEV_H
#define BURN_VK_DEV_H

#include <stddef.h>
#include <stdint.h>
#include "../../ir/base.h"

typedef struct VkdDev VkdDev;
typedef struct VkdBuf VkdBuf;
typedef struct VkdPipe VkdPipe;
typedef struct VkdCmd VkdCmd;

/* The process's device, opened on the first call.  Returns status. */
int vkd_open(Ctx *c, VkdDev **out);
/* "llvmpipe (LLVM 15.0.6, 256 bits) (cpu, Vulkan 1.3.230)" */
const char *vkd_describe(const VkdDev *d);
/* The device's storage-buffer offset alignment (a binding's offset must
 * be a multiple) and largest storage binding. */
uint64_t vkd_offset_align(const VkdDev *d);
uint64_t vkd_max_range(const VkdDev *d);
/* Workgroups one dispatch may have along axis (0 x, 1 y, 2 z). */
uint32_t vkd_max_groups(const VkdDev *d, int axis);

/* A buffer of bytes (0 gives a small valid one), mapped: vkd_buf_ptr. */
int vkd_buf_create(Ctx *c, VkdDev *d, size_t bytes, VkdBuf **out);
void *vkd_buf_ptr(VkdBuf *b);
void vkd_buf_destroy(VkdDev *d, VkdBuf *b);

/* A compute pipeline from validated SPIR-V (entry main) whose
 * descriptor set 0 has storage buffers at the nbind binding numbers of
 * bind, and push bytes of push constants (0: none; more than the
 * device's maxPushConstantsSize is BURN_ERR_UNSUPPORTED).  what names it
 * in messages. */
int vkd_pipe_create(Ctx *c, VkdDev *d, const uint32_t *spv, size_t nwords,
                    const int *bind, int nbind, int push, const char *what,
                    VkdPipe **out);
void vkd_pipe_destroy(VkdDev *d, VkdPipe *p);

/* What a dispatch binds: binding number -> range of a buffer. */
typedef struct VkdBind {
	int binding;
	VkdBuf *buf;
	uint64_t offset, range;
} VkdBind;

int vkd_cmd_begin(Ctx *c, VkdDev *d, VkdCmd **out);
/* Record p on groups x groups_y x 1 workgroups with the bindings (every
 * one of p's) and its push constants from push (the pipeline's bytes of
 * them; unread where it has none).  A barrier orders it after the
 * previous dispatch. */
int vkd_cmd_dispatch(Ctx *c, VkdCmd *m, VkdPipe *p, const VkdBind *b, int nb,
                     uint32_t groups, uint32_t groups_y, const void *push);
/* Submit what was recorded and wait; what names the work. */
int vkd_cmd_run(Ctx *c, VkdCmd *m, const char *what);
void vkd_cmd_free(VkdCmd *m);

#endif
