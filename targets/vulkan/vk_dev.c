/*
 * vk_dev.c - Vulkan through a loader opened with dlopen (vk_dev.h).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>
#include "vk_dev.h"

/* The entry points used, loaded by name. */
#define VKD_FNS(X) \
	X(vkDestroyInstance) X(vkEnumeratePhysicalDevices) X(vkGetPhysicalDeviceProperties) \
	X(vkGetPhysicalDeviceQueueFamilyProperties) X(vkGetPhysicalDeviceFeatures2) \
	X(vkGetPhysicalDeviceMemoryProperties) X(vkCreateDevice) X(vkGetDeviceQueue) \
	X(vkCreateBuffer) X(vkDestroyBuffer) X(vkGetBufferMemoryRequirements) \
	X(vkAllocateMemory) X(vkFreeMemory) X(vkBindBufferMemory) X(vkMapMemory) \
	X(vkCreateShaderModule) X(vkDestroyShaderModule) X(vkCreateDescriptorSetLayout) \
	X(vkDestroyDescriptorSetLayout) X(vkCreatePipelineLayout) X(vkDestroyPipelineLayout) \
	X(vkCreateComputePipelines) X(vkDestroyPipeline) X(vkCreateDescriptorPool) \
	X(vkDestroyDescriptorPool) X(vkAllocateDescriptorSets) X(vkUpdateDescriptorSets) \
	X(vkCreateCommandPool) X(vkDestroyCommandPool) X(vkAllocateCommandBuffers) \
	X(vkBeginCommandBuffer) X(vkEndCommandBuffer) X(vkCmdBindPipeline) \
	X(vkCmdBindDescriptorSets) X(vkCmdDispatch) X(vkCmdPipelineBarrier) X(vkCmdPushConstants) \
	X(vkCreateFence) X(vkDestroyFence) X(vkWaitForFences) X(vkQueueSubmit) \
	X(vkDestroyDevice)

struct VkdDev {
	void *lib;
	PFN_vkGetInstanceProcAddr gipa;
	VkInstance inst;
	VkPhysicalDevice phys;
	VkDevice dev;
	VkQueue queue;
	uint32_t qfam;
	uint32_t memtype;
	VkPhysicalDeviceProperties props;
	pthread_mutex_t qlock;   /* the queue is one thread's at a time */
	char about[400];
#define X(f) PFN_##f f;
	VKD_FNS(X)
#undef X
};

struct VkdBuf {
	VkBuffer buf;
	VkDeviceMemory mem;
	void *ptr;
	size_t bytes;
};

struct VkdPipe {
	VkShaderModule mod;
	VkDescriptorSetLayout dsl;
	VkPipelineLayout layout;
	VkPipeline pipe;
	int nbind;
	int push;                /* bytes of push constants */
	char what[160];
};

struct VkdCmd {
	VkdDev *d;
	VkCommandPool pool;
	VkCommandBuffer cb;
	VkDescriptorPool *dpool;  /* one per dispatch */
	int ndpool, capdpool;
	int recorded;
};

static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;
static VkdDev *the_dev;
static char why_not[400];   /* set once opening failed for good */

static const char *
vkres(VkResult r)
{
	switch (r) {
	case VK_SUCCESS: return "VK_SUCCESS";
	case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
	case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
	case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
	case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
	case VK_ERROR_INCOMPATIBLE_DRIVER: return "VK_ERROR_INCOMPATIBLE_DRIVER";
	case VK_ERROR_FEATURE_NOT_PRESENT: return "VK_ERROR_FEATURE_NOT_PRESENT";
	case VK_ERROR_EXTENSION_NOT_PRESENT: return "VK_ERROR_EXTENSION_NOT_PRESENT";
	case VK_ERROR_TOO_MANY_OBJECTS: return "VK_ERROR_TOO_MANY_OBJECTS";
	case VK_ERROR_INVALID_SHADER_NV: return "VK_ERROR_INVALID_SHADER_NV";
	case VK_TIMEOUT: return "VK_TIMEOUT";
	default: return "a Vulkan error";
	}
}

static int
vfail(Ctx *c, const VkdDev *d, VkResult r, const char *what)
{
	int code = r == VK_ERROR_OUT_OF_HOST_MEMORY || r == VK_ERROR_OUT_OF_DEVICE_MEMORY
	           ? BURN_ERR_NOMEM : BURN_ERR_INTERNAL;
	return burn_fail(c, code, "vulkan %s: %s: %s (%d)", d ? d->props.deviceName : "",
	                 what, vkres(r), (int)r);
}

static int
rank(VkPhysicalDeviceType t)
{
	switch (t) {
	case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 0;
	case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 1;
	case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 2;
	case VK_PHYSICAL_DEVICE_TYPE_CPU: return 3;
	default: return 4;
	}
}

static const char *
tname(VkPhysicalDeviceType t)
{
	static const char *const n[] = { "other", "integrated", "discrete", "virtual", "cpu" };
	return (unsigned)t < 5 ? n[t] : "other";
}

/* Open the loader, the instance and the chosen device into d; on
 * failure a message in msg. */
static int
dev_init(VkdDev *d, char *msg, size_t cap)
{
	VkResult r;
	uint32_t n = 0, best = UINT32_MAX;
	VkPhysicalDevice pd[32];
	const char *want = getenv("BURNCC_VULKAN_DEVICE");
	PFN_vkCreateInstance create_instance;

	if (want && !strcmp(want, "none")) {
		snprintf(msg, cap, "vulkan: no Vulkan device (BURNCC_VULKAN_DEVICE=none)");
		return BURN_ERR_UNSUPPORTED;
	}
	d->lib = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!d->lib) {
		snprintf(msg, cap, "vulkan: no Vulkan loader (dlopen libvulkan.so.1: %s)", dlerror());
		return BURN_ERR_UNSUPPORTED;
	}
	d->gipa = (PFN_vkGetInstanceProcAddr)dlsym(d->lib, "vkGetInstanceProcAddr");
	create_instance = d->gipa ? (PFN_vkCreateInstance)d->gipa(NULL, "vkCreateInstance") : NULL;
	if (!create_instance) {
		snprintf(msg, cap, "vulkan: the loader has no vkCreateInstance");
		return BURN_ERR_UNSUPPORTED;
	}
	{
		VkApplicationInfo app = { VK_STRUCTURE_TYPE_APPLICATION_INFO };
		VkInstanceCreateInfo ci = { VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO };
		app.pApplicationName = "burncc";
		app.apiVersion = VK_API_VERSION_1_2;
		ci.pApplicationInfo = &app;
		if ((r = create_instance(&ci, NULL, &d->inst)) != VK_SUCCESS) {
			snprintf(msg, cap, "vulkan: vkCreateInstance: %s (%d)", vkres(r), (int)r);
			return r == VK_ERROR_INCOMPATIBLE_DRIVER ? BURN_ERR_UNSUPPORTED : BURN_ERR_INTERNAL;
		}
	}
#define X(f) d->f = (PFN_##f)d->gipa(d->inst, #f); \
	if (!d->f) { snprintf(msg, cap, "vulkan: the loader has no %s", #f); return BURN_ERR_UNSUPPORTED; }
	VKD_FNS(X)
#undef X
	n = 32;
	if ((r = d->vkEnumeratePhysicalDevices(d->inst, &n, pd)) < 0 || n == 0) {
		snprintf(msg, cap, "vulkan: no Vulkan device (%s)", r < 0 ? vkres(r) : "none listed");
		return BURN_ERR_UNSUPPORTED;
	}
	for (uint32_t i = 0; i < n; i++) {
		VkPhysicalDeviceProperties p;
		VkQueueFamilyProperties q[16];
		uint32_t nq = 16, fam = UINT32_MAX;
		d->vkGetPhysicalDeviceProperties(pd[i], &p);
		d->vkGetPhysicalDeviceQueueFamilyProperties(pd[i], &nq, q);
		for (uint32_t j = 0; j < nq && fam == UINT32_MAX; j++)
			if (q[j].queueFlags & VK_QUEUE_COMPUTE_BIT)
				fam = j;
		if (fam == UINT32_MAX || p.apiVersion < VK_API_VERSION_1_2)
			continue;
		if (want && *want) {
			char *end;
			long k = strtol(want, &end, 10);
			if (*end ? !strstr(p.deviceName, want) : k != (long)i)
				continue;
		} else if (best != UINT32_MAX && rank(p.deviceType) >= rank(d->props.deviceType)) {
			continue;
		}
		best = i;
		d->props = p;
		d->qfam = fam;
	}
	if (best == UINT32_MAX) {
		snprintf(msg, cap, "vulkan: no Vulkan 1.2 device with a compute queue%s%s",
		         want && *want ? " matches BURNCC_VULKAN_DEVICE=" : "", want && *want ? want : "");
		return BURN_ERR_UNSUPPORTED;
	}
	d->phys = pd[best];
	{
		VkPhysicalDeviceVulkan12Features f12 = { VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES };
		VkPhysicalDeviceVulkan11Features f11 = { VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES };
		VkPhysicalDeviceFeatures2 f = { VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2 };
		VkPhysicalDeviceVulkan12Features e12 = { VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES };
		VkPhysicalDeviceVulkan11Features e11 = { VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES };
		VkPhysicalDeviceFeatures2 e = { VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2 };
		VkDeviceQueueCreateInfo qi = { VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO };
		VkDeviceCreateInfo di = { VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO };
		float prio = 1;
		const char *miss = NULL;
		f.pNext = &f11;
		f11.pNext = &f12;
		d->vkGetPhysicalDeviceFeatures2(d->phys, &f);
		if (!f.features.shaderInt64) miss = "shaderInt64";
		else if (!f.features.shaderInt16) miss = "shaderInt16";
		else if (!f12.shaderInt8) miss = "shaderInt8";
		else if (!f12.storageBuffer8BitAccess) miss = "storageBuffer8BitAccess";
		else if (!f11.storageBuffer16BitAccess) miss = "storageBuffer16BitAccess";
		if (miss) {
			snprintf(msg, cap, "vulkan %s: the device lacks %s, which the shaders need",
			         d->props.deviceName, miss);
			return BURN_ERR_UNSUPPORTED;
		}
		e.pNext = &e11;
		e11.pNext = &e12;
		e.features.shaderInt64 = VK_TRUE;
		e.features.shaderInt16 = VK_TRUE;
		e.features.shaderFloat64 = f.features.shaderFloat64;
		e12.shaderInt8 = VK_TRUE;
		e12.storageBuffer8BitAccess = VK_TRUE;
		e11.storageBuffer16BitAccess = VK_TRUE;
		qi.queueFamilyIndex = d->qfam;
		qi.queueCount = 1;
		qi.pQueuePriorities = &prio;
		di.pNext = &e;
		di.queueCreateInfoCount = 1;
		di.pQueueCreateInfos = &qi;
		if ((r = d->vkCreateDevice(d->phys, &di, NULL, &d->dev)) != VK_SUCCESS) {
			snprintf(msg, cap, "vulkan %s: vkCreateDevice: %s (%d)", d->props.deviceName,
			         vkres(r), (int)r);
			return BURN_ERR_INTERNAL;
		}
		d->vkGetDeviceQueue(d->dev, d->qfam, 0, &d->queue);
	}
	{
		VkPhysicalDeviceMemoryProperties mp;
		const VkMemoryPropertyFlags need = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
		                                   VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
		d->vkGetPhysicalDeviceMemoryProperties(d->phys, &mp);
		d->memtype = UINT32_MAX;
		for (uint32_t i = 0; i < mp.memoryTypeCount && d->memtype == UINT32_MAX; i++)
			if ((mp.memoryTypes[i].propertyFlags & need) == need)
				d->memtype = i;
		if (d->memtype == UINT32_MAX) {
			snprintf(msg, cap, "vulkan %s: no host-visible coherent memory", d->props.deviceName);
			return BURN_ERR_UNSUPPORTED;
		}
	}
	pthread_mutex_init(&d->qlock, NULL);
	snprintf(d->about, sizeof d->about, "%s (%s, Vulkan %u.%u.%u)", d->props.deviceName,
	         tname(d->props.deviceType), VK_API_VERSION_MAJOR(d->props.apiVersion),
	         VK_API_VERSION_MINOR(d->props.apiVersion), VK_API_VERSION_PATCH(d->props.apiVersion));
	return BURN_OK;
}

int
vkd_open(Ctx *c, VkdDev **out)
{
	int rc = BURN_OK;

	*out = NULL;
	pthread_mutex_lock(&open_lock);
	if (!the_dev && !why_not[0]) {
		VkdDev *d = calloc(1, sizeof *d);
		char msg[400];
		if (!d) {
			pthread_mutex_unlock(&open_lock);
			return burn_fail(c, BURN_ERR_NOMEM, "vulkan: out of memory");
		}
		rc = dev_init(d, msg, sizeof msg);
		if (rc) {
			/* a loader or device that is not there stays not there */
			snprintf(why_not, sizeof why_not, "%s", msg);
			if (d->dev && d->vkDestroyDevice)
				d->vkDestroyDevice(d->dev, NULL);
			if (d->inst && d->vkDestroyInstance)
				d->vkDestroyInstance(d->inst, NULL);
			if (d->lib)
				dlclose(d->lib);
			free(d);
		} else {
			the_dev = d;
		}
	}
	if (the_dev)
		*out = the_dev;
	else
		rc = burn_fail(c, BURN_ERR_UNSUPPORTED, "%s", why_not);
	pthread_mutex_unlock(&open_lock);
	return rc;
}

const char *
vkd_describe(const VkdDev *d)
{
	return d->about;
}

uint64_t
vkd_offset_align(const VkdDev *d)
{
	return d->props.limits.minStorageBufferOffsetAlignment;
}

uint64_t
vkd_max_range(const VkdDev *d)
{
	return d->props.limits.maxStorageBufferRange;
}

uint32_t
vkd_max_groups(const VkdDev *d, int axis)
{
	return d->props.limits.maxComputeWorkGroupCount[axis];
}

/* ---- buffers ------------------------------------------------------------- */

int
vkd_buf_create(Ctx *c, VkdDev *d, size_t bytes, VkdBuf **out)
{
	VkBufferCreateInfo bi = { VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO };
	VkMemoryAllocateInfo ai = { VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO };
	VkMemoryRequirements req;
	VkdBuf *b = calloc(1, sizeof *b);
	VkResult r;

	*out = NULL;
	if (!b)
		return burn_fail(c, BURN_ERR_NOMEM, "vulkan: out of memory");
	b->bytes = bytes < 16 ? 16 : (bytes + 15) & ~(size_t)15;
	bi.size = b->bytes;
	bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
	           VK_BUFFER_USAGE_TRANSFER_DST_BIT;
	bi.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
	if ((r = d->vkCreateBuffer(d->dev, &bi, NULL, &b->buf)) != VK_SUCCESS) {
		free(b);
		return vfail(c, d, r, "creating a buffer");
	}
	d->vkGetBufferMemoryRequirements(d->dev, b->buf, &req);
	if (!(req.memoryTypeBits & (1u << d->memtype))) {
		d->vkDestroyBuffer(d->dev, b->buf, NULL);
		free(b);
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "vulkan %s: storage buffers cannot live "
		                 "in host-visible memory", d->props.deviceName);
	}
	ai.allocationSize = req.size;
	ai.memoryTypeIndex = d->memtype;
	if ((r = d->vkAllocateMemory(d->dev, &ai, NULL, &b->mem)) != VK_SUCCESS ||
	    (r = d->vkBindBufferMemory(d->dev, b->buf, b->mem, 0)) != VK_SUCCESS ||
	    (r = d->vkMapMemory(d->dev, b->mem, 0, VK_WHOLE_SIZE, 0, &b->ptr)) != VK_SUCCESS) {
		char what[80];
		snprintf(what, sizeof what, "allocating %zu bytes", bytes);
		vkd_buf_destroy(d, b);
		return vfail(c, d, r, what);
	}
	*out = b;
	return BURN_OK;
}

void *
vkd_buf_ptr(VkdBuf *b)
{
	return b->ptr;
}

void
vkd_buf_destroy(VkdDev *d, VkdBuf *b)
{
	if (!b)
		return;
	if (b->buf)
		d->vkDestroyBuffer(d->dev, b->buf, NULL);
	if (b->mem)
		d->vkFreeMemory(d->dev, b->mem, NULL);   /* unmaps */
	free(b);
}

/* ---- pipelines ----------------------------------------------------------- */

int
vkd_pipe_create(Ctx *c, VkdDev *d, const uint32_t *spv, size_t nwords, const int *bind,
                int nbind, int push, const char *what, VkdPipe **out)
{
	VkPushConstantRange pr = { VK_SHADER_STAGE_COMPUTE_BIT, 0, (uint32_t)push };
	VkShaderModuleCreateInfo mi = { VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO };
	VkDescriptorSetLayoutCreateInfo li = { VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO };
	VkPipelineLayoutCreateInfo pl = { VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO };
	VkComputePipelineCreateInfo ci = { VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO };
	VkDescriptorSetLayoutBinding *lb = calloc((size_t)nbind + 1, sizeof *lb);
	VkdPipe *p = calloc(1, sizeof *p);
	VkResult r;
	const char *step = "";

	*out = NULL;
	if (!lb || !p) {
		free(lb);
		free(p);
		return burn_fail(c, BURN_ERR_NOMEM, "vulkan: out of memory");
	}
	snprintf(p->what, sizeof p->what, "%s", what);
	p->nbind = nbind;
	p->push = push;
	if (push < 0 || (uint32_t)push > d->props.limits.maxPushConstantsSize) {
		free(lb);
		free(p);
		return burn_fail(c, BURN_ERR_UNSUPPORTED, "vulkan %s: shader %s: %d bytes of push "
		                 "constants, the device takes %u", d->props.deviceName, what, push,
		                 d->props.limits.maxPushConstantsSize);
	}
	for (int i = 0; i < nbind; i++) {
		lb[i].binding = (uint32_t)bind[i];
		lb[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
		lb[i].descriptorCount = 1;
		lb[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
	}
	mi.codeSize = nwords * 4;
	mi.pCode = spv;
	li.bindingCount = (uint32_t)nbind;
	li.pBindings = lb;
	if ((r = d->vkCreateShaderModule(d->dev, &mi, NULL, &p->mod)) != VK_SUCCESS) {
		step = "vkCreateShaderModule";
		goto bad;
	}
	if ((r = d->vkCreateDescriptorSetLayout(d->dev, &li, NULL, &p->dsl)) != VK_SUCCESS) {
		step = "vkCreateDescriptorSetLayout";
		goto bad;
	}
	pl.setLayoutCount = 1;
	pl.pSetLayouts = &p->dsl;
	if (push > 0) {
		pl.pushConstantRangeCount = 1;
		pl.pPushConstantRanges = &pr;
	}
	if ((r = d->vkCreatePipelineLayout(d->dev, &pl, NULL, &p->layout)) != VK_SUCCESS) {
		step = "vkCreatePipelineLayout";
		goto bad;
	}
	ci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
	ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
	ci.stage.module = p->mod;
	ci.stage.pName = "main";
	ci.layout = p->layout;
	if ((r = d->vkCreateComputePipelines(d->dev, VK_NULL_HANDLE, 1, &ci, NULL, &p->pipe)) !=
	    VK_SUCCESS) {
		step = "vkCreateComputePipelines";
		goto bad;
	}
	free(lb);
	*out = p;
	return BURN_OK;
bad:
	free(lb);
	vkd_pipe_destroy(d, p);
	{
		char m[300];
		snprintf(m, sizeof m, "shader %s: %s", what, step);
		return vfail(c, d, r, m);
	}
}

void
vkd_pipe_destroy(VkdDev *d, VkdPipe *p)
{
	if (!p)
		return;
	if (p->pipe)
		d->vkDestroyPipeline(d->dev, p->pipe, NULL);
	if (p->layout)
		d->vkDestroyPipelineLayout(d->dev, p->layout, NULL);
	if (p->dsl)
		d->vkDestroyDescriptorSetLayout(d->dev, p->dsl, NULL);
	if (p->mod)
		d->vkDestroyShaderModule(d->dev, p->mod, NULL);
	free(p);
}

/* ---- command buffers ----------------------------------------------------- */

int
vkd_cmd_begin(Ctx *c, VkdDev *d, VkdCmd **out)
{
	VkCommandPoolCreateInfo pi = { VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO };
	VkCommandBufferAllocateInfo ai = { VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO };
	VkCommandBufferBeginInfo bi = { VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO };
	VkdCmd *m = calloc(1, sizeof *m);
	VkResult r;

	*out = NULL;
	if (!m)
		return burn_fail(c, BURN_ERR_NOMEM, "vulkan: out of memory");
	m->d = d;
	pi.queueFamilyIndex = d->qfam;
	if ((r = d->vkCreateCommandPool(d->dev, &pi, NULL, &m->pool)) != VK_SUCCESS) {
		free(m);
		return vfail(c, d, r, "vkCreateCommandPool");
	}
	ai.commandPool = m->pool;
	ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
	ai.commandBufferCount = 1;
	bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
	if ((r = d->vkAllocateCommandBuffers(d->dev, &ai, &m->cb)) != VK_SUCCESS ||
	    (r = d->vkBeginCommandBuffer(m->cb, &bi)) != VK_SUCCESS) {
		vkd_cmd_free(m);
		return vfail(c, d, r, "recording a command buffer");
	}
	*out = m;
	return BURN_OK;
}

int
vkd_cmd_dispatch(Ctx *c, VkdCmd *m, VkdPipe *p, const VkdBind *b, int nb, uint32_t groups,
                 uint32_t groups_y, const void *push)
{
	VkdDev *d = m->d;
	VkDescriptorPoolSize ps = { VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, (uint32_t)(nb ? nb : 1) };
	VkDescriptorPoolCreateInfo pi = { VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO };
	VkDescriptorSetAllocateInfo ai = { VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO };
	VkDescriptorBufferInfo *bi = calloc((size_t)nb + 1, sizeof *bi);
	VkWriteDescriptorSet *w = calloc((size_t)nb + 1, sizeof *w);
	VkDescriptorSet set;
	VkResult r;

	if (!bi || !w) {
		free(bi);
		free(w);
		return burn_fail(c, BURN_ERR_NOMEM, "vulkan: out of memory");
	}
	if (m->ndpool == m->capdpool) {
		int cap = m->capdpool ? 2 * m->capdpool : 16;
		VkDescriptorPool *np = realloc(m->dpool, (size_t)cap * sizeof *np);
		if (!np) {
			free(bi);
			free(w);
			return burn_fail(c, BURN_ERR_NOMEM, "vulkan: out of memory");
		}
		m->dpool = np;
		m->capdpool = cap;
	}
	pi.maxSets = 1;
	pi.poolSizeCount = 1;
	pi.pPoolSizes = &ps;
	if ((r = d->vkCreateDescriptorPool(d->dev, &pi, NULL, &m->dpool[m->ndpool])) != VK_SUCCESS) {
		free(bi);
		free(w);
		return vfail(c, d, r, "vkCreateDescriptorPool");
	}
	ai.descriptorPool = m->dpool[m->ndpool++];
	ai.descriptorSetCount = 1;
	ai.pSetLayouts = &p->dsl;
	if ((r = d->vkAllocateDescriptorSets(d->dev, &ai, &set)) != VK_SUCCESS) {
		free(bi);
		free(w);
		return vfail(c, d, r, "vkAllocateDescriptorSets");
	}
	for (int i = 0; i < nb; i++) {
		bi[i].buffer = b[i].buf->buf;
		bi[i].offset = b[i].offset;
		bi[i].range = b[i].range;
		w[i].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
		w[i].dstSet = set;
		w[i].dstBinding = (uint32_t)b[i].binding;
		w[i].descriptorCount = 1;
		w[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
		w[i].pBufferInfo = &bi[i];
	}
	d->vkUpdateDescriptorSets(d->dev, (uint32_t)nb, w, 0, NULL);
	free(bi);
	free(w);
	if (m->recorded) {
		/* the previous dispatch's writes are visible to this one */
		VkMemoryBarrier mb = { VK_STRUCTURE_TYPE_MEMORY_BARRIER };
		mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_SHADER_READ_BIT;
		mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
		d->vkCmdPipelineBarrier(m->cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
		                        VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &mb, 0, NULL, 0,
		                        NULL);
	}
	d->vkCmdBindPipeline(m->cb, VK_PIPELINE_BIND_POINT_COMPUTE, p->pipe);
	d->vkCmdBindDescriptorSets(m->cb, VK_PIPELINE_BIND_POINT_COMPUTE, p->layout, 0, 1, &set, 0,
	                           NULL);
	if (p->push > 0)
		d->vkCmdPushConstants(m->cb, p->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0,
		                      (uint32_t)p->push, push);
	d->vkCmdDispatch(m->cb, groups, groups_y, 1);
	m->recorded++;
	return BURN_OK;
}

int
vkd_cmd_run(Ctx *c, VkdCmd *m, const char *what)
{
	VkdDev *d = m->d;
	VkSubmitInfo si = { VK_STRUCTURE_TYPE_SUBMIT_INFO };
	VkFenceCreateInfo fi = { VK_STRUCTURE_TYPE_FENCE_CREATE_INFO };
	VkFence fence;
	VkResult r;

	{
		/* the dispatches' writes are visible to the host after the fence */
		VkMemoryBarrier mb = { VK_STRUCTURE_TYPE_MEMORY_BARRIER };
		mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
		mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
		d->vkCmdPipelineBarrier(m->cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
		                        VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
	}
	if ((r = d->vkEndCommandBuffer(m->cb)) != VK_SUCCESS)
		return vfail(c, d, r, what);
	if ((r = d->vkCreateFence(d->dev, &fi, NULL, &fence)) != VK_SUCCESS)
		return vfail(c, d, r, "vkCreateFence");
	/* the host writes to the mapped memory before the submission are
	 * visible to it (coherent memory, vkQueueSubmit's implicit host
	 * barrier); the fence wait makes the device's writes visible to the
	 * host's reads after it */
	si.commandBufferCount = 1;
	si.pCommandBuffers = &m->cb;
	pthread_mutex_lock(&d->qlock);
	r = d->vkQueueSubmit(d->queue, 1, &si, fence);
	pthread_mutex_unlock(&d->qlock);
	if (r == VK_SUCCESS)
		r = d->vkWaitForFences(d->dev, 1, &fence, VK_TRUE, UINT64_MAX);
	d->vkDestroyFence(d->dev, fence, NULL);
	return r == VK_SUCCESS ? BURN_OK : vfail(c, d, r, what);
}

void
vkd_cmd_free(VkdCmd *m)
{
	if (!m)
		return;
	for (int i = 0; i < m->ndpool; i++)
		m->d->vkDestroyDescriptorPool(m->d->dev, m->dpool[i], NULL);
	free(m->dpool);
	if (m->pool)
		m->d->vkDestroyCommandPool(m->d->dev, m->pool, NULL);
	free(m);
}
