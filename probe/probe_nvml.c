/*
 * probe_nvml.c - the driver's view of a child's GPU memory, through NVML
 * loaded at run time with dlopen("libnvidia-ml.so.1"): oomlint needs no
 * CUDA toolkit to build and runs where there is no driver (NVML is simply
 * absent then, and the probe says so).
 *
 * A sampling thread reads the processes on every device every 10 ms and
 * keeps the highest figure for the child's pid since the runner last took it
 * (once per iteration record). torch's allocator figures miss what the
 * driver holds for the CUDA context and for cuBLAS/cuDNN workspaces; NVML
 * sees all of it. Where the driver does not list the pid (a container with
 * its own PID namespace), the whole device's used memory is sampled instead
 * and marked as such, for the device the child reported (UUID or PCI id).
 *
 * The process-list call exists in three versions with two struct layouts:
 * _v3 and _v2 take {pid, usedGpuMemory, gpuInstanceId, computeInstanceId},
 * the unversioned one only {pid, usedGpuMemory}. The newest one present is used.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "probe_internal.h"

typedef int nvml_ret;                 /* nvmlReturn_t; 0 is NVML_SUCCESS */
typedef struct nvml_device *nvml_dev; /* nvmlDevice_t, opaque */

#define NVML_SUCCESS 0
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_VALUE_NOT_AVAILABLE_ULL 0xFFFFFFFFFFFFFFFFull
#define OL_NVML_MAX_DEVICES 64
#define OL_NVML_MAX_PROCS 256

typedef struct nvml_proc_v1 {
    unsigned int pid;
    unsigned long long used;
} nvml_proc_v1;

typedef struct nvml_proc_v2 {
    unsigned int pid;
    unsigned long long used;
    unsigned int gpu_instance_id;
    unsigned int compute_instance_id;
} nvml_proc_v2;

typedef struct nvml_memory {
    unsigned long long total, free, used;
} nvml_memory;

struct ol_nvml {
    void *lib;
    nvml_ret (*shutdown)(void);
    nvml_ret (*by_index)(unsigned int, nvml_dev *);
    nvml_ret (*by_uuid)(const char *, nvml_dev *);
    nvml_ret (*by_pci)(const char *, nvml_dev *);
    nvml_ret (*procs)(nvml_dev, unsigned int *, void *);
    int procs_layout; /* 1 or 2 */
    nvml_ret (*memory)(nvml_dev, nvml_memory *);
    nvml_dev devices[OL_NVML_MAX_DEVICES];
    unsigned int device_count;
    nvml_dev chosen; /* the child's device, for the device-wide fallback */

    pthread_t thread;
    bool running;
    pthread_mutex_t mu;
    bool stop;
    pid_t pid;
    double peak_process, peak_device;
    bool have_process, have_device;
};

/* dlsym returns void *; converting it to a function pointer is what POSIX
 * promises works. The memcpy keeps -Wpedantic quiet about it. */
static void *sym(void *lib, const char *name)
{
    return dlsym(lib, name);
}

#define LOAD(dst, name)                                  \
    do {                                                 \
        void *p_ = sym(n->lib, name);                    \
        memcpy(&(dst), &p_, sizeof(dst));                \
    } while (0)

ol_nvml *ol_nvml_open(ol_buf *why)
{
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        ol_buf_puts(why, "the NVIDIA driver's NVML library (libnvidia-ml.so.1) is not installed");
        return NULL;
    }
    ol_nvml *n = ol_xcalloc(1, sizeof *n);
    n->lib = lib;
    nvml_ret (*init)(void) = NULL;
    nvml_ret (*count)(unsigned int *) = NULL;
    LOAD(init, "nvmlInit_v2");
    if (!init)
        LOAD(init, "nvmlInit");
    LOAD(n->shutdown, "nvmlShutdown");
    LOAD(count, "nvmlDeviceGetCount_v2");
    if (!count)
        LOAD(count, "nvmlDeviceGetCount");
    LOAD(n->by_index, "nvmlDeviceGetHandleByIndex_v2");
    if (!n->by_index)
        LOAD(n->by_index, "nvmlDeviceGetHandleByIndex");
    LOAD(n->by_uuid, "nvmlDeviceGetHandleByUUID");
    LOAD(n->by_pci, "nvmlDeviceGetHandleByPciBusId_v2");
    if (!n->by_pci)
        LOAD(n->by_pci, "nvmlDeviceGetHandleByPciBusId");
    n->procs_layout = 2;
    LOAD(n->procs, "nvmlDeviceGetComputeRunningProcesses_v3");
    if (!n->procs)
        LOAD(n->procs, "nvmlDeviceGetComputeRunningProcesses_v2");
    if (!n->procs) {
        n->procs_layout = 1;
        LOAD(n->procs, "nvmlDeviceGetComputeRunningProcesses");
    }
    LOAD(n->memory, "nvmlDeviceGetMemoryInfo");
    if (!init || !count || !n->by_index || !n->procs || !n->shutdown) {
        ol_buf_puts(why, "libnvidia-ml.so.1 lacks the functions the probe uses");
        dlclose(lib);
        free(n);
        return NULL;
    }
    nvml_ret rc = init();
    if (rc != NVML_SUCCESS) {
        ol_buf_printf(why, "NVML could not be initialised (error %d)", rc);
        dlclose(lib);
        free(n);
        return NULL;
    }
    unsigned int c = 0;
    if (count(&c) != NVML_SUCCESS || c == 0) {
        ol_buf_puts(why, "NVML sees no GPU");
        n->shutdown();
        dlclose(lib);
        free(n);
        return NULL;
    }
    for (unsigned int i = 0; i < c && n->device_count < OL_NVML_MAX_DEVICES; i++)
        if (n->by_index(i, &n->devices[n->device_count]) == NVML_SUCCESS)
            n->device_count++;
    if (n->device_count == 1)
        n->chosen = n->devices[0];
    pthread_mutex_init(&n->mu, NULL);
    return n;
}

void ol_nvml_set_device(ol_nvml *n, const char *uuid, const char *pci_bus_id)
{
    if (!n)
        return;
    nvml_dev d = NULL;
    if (uuid && *uuid && n->by_uuid) {
        /* torch prints the UUID without NVML's "GPU-" prefix */
        char buf[96];
        if (strncmp(uuid, "GPU-", 4) == 0 || strncmp(uuid, "MIG-", 4) == 0)
            snprintf(buf, sizeof buf, "%s", uuid);
        else
            snprintf(buf, sizeof buf, "GPU-%s", uuid);
        if (n->by_uuid(buf, &d) != NVML_SUCCESS)
            d = NULL;
    }
    if (!d && pci_bus_id && *pci_bus_id && n->by_pci && n->by_pci(pci_bus_id, &d) != NVML_SUCCESS)
        d = NULL;
    pthread_mutex_lock(&n->mu);
    if (d)
        n->chosen = d;
    pthread_mutex_unlock(&n->mu);
}

/* The child's memory on one device, or -1 when the device does not list it. */
static double process_memory(ol_nvml *n, nvml_dev d, pid_t pid)
{
    unsigned int count = OL_NVML_MAX_PROCS;
    if (n->procs_layout == 2) {
        nvml_proc_v2 procs[OL_NVML_MAX_PROCS];
        if (n->procs(d, &count, procs) != NVML_SUCCESS)
            return -1;
        for (unsigned int i = 0; i < count && i < OL_NVML_MAX_PROCS; i++)
            if ((pid_t)procs[i].pid == pid && procs[i].used != NVML_VALUE_NOT_AVAILABLE_ULL)
                return (double)procs[i].used;
    } else {
        nvml_proc_v1 procs[OL_NVML_MAX_PROCS];
        if (n->procs(d, &count, procs) != NVML_SUCCESS)
            return -1;
        for (unsigned int i = 0; i < count && i < OL_NVML_MAX_PROCS; i++)
            if ((pid_t)procs[i].pid == pid && procs[i].used != NVML_VALUE_NOT_AVAILABLE_ULL)
                return (double)procs[i].used;
    }
    return -1;
}

static void *sampler(void *arg)
{
    ol_nvml *n = arg;
    for (;;) {
        pthread_mutex_lock(&n->mu);
        bool stop = n->stop;
        pid_t pid = n->pid;
        nvml_dev chosen = n->chosen;
        pthread_mutex_unlock(&n->mu);
        if (stop)
            break;
        double proc = -1;
        for (unsigned int i = 0; i < n->device_count; i++) {
            double m = process_memory(n, n->devices[i], pid);
            if (m >= 0)
                proc = proc < 0 ? m : proc + m;
        }
        double dev = -1;
        nvml_memory mem;
        if (proc < 0 && chosen && n->memory && n->memory(chosen, &mem) == NVML_SUCCESS)
            dev = (double)mem.used;
        pthread_mutex_lock(&n->mu);
        if (proc >= 0 && (!n->have_process || proc > n->peak_process)) {
            n->peak_process = proc;
            n->have_process = true;
        }
        if (dev >= 0 && (!n->have_device || dev > n->peak_device)) {
            n->peak_device = dev;
            n->have_device = true;
        }
        pthread_mutex_unlock(&n->mu);
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

bool ol_nvml_start(ol_nvml *n, pid_t pid)
{
    if (!n || n->running)
        return false;
    pthread_mutex_lock(&n->mu);
    n->stop = false;
    n->pid = pid;
    n->have_process = n->have_device = false;
    n->peak_process = n->peak_device = 0;
    pthread_mutex_unlock(&n->mu);
    if (pthread_create(&n->thread, NULL, sampler, n) != 0)
        return false;
    n->running = true;
    return true;
}

bool ol_nvml_take_peak(ol_nvml *n, double *bytes, bool *process_scope)
{
    if (!n || !n->running)
        return false;
    pthread_mutex_lock(&n->mu);
    bool got = false;
    if (n->have_process) {
        *bytes = n->peak_process;
        *process_scope = true;
        got = true;
    } else if (n->have_device) {
        *bytes = n->peak_device;
        *process_scope = false;
        got = true;
    }
    n->have_process = n->have_device = false;
    n->peak_process = n->peak_device = 0;
    pthread_mutex_unlock(&n->mu);
    return got;
}

void ol_nvml_stop(ol_nvml *n)
{
    if (!n || !n->running)
        return;
    pthread_mutex_lock(&n->mu);
    n->stop = true;
    pthread_mutex_unlock(&n->mu);
    pthread_join(n->thread, NULL);
    n->running = false;
}

void ol_nvml_close(ol_nvml *n)
{
    if (!n)
        return;
    ol_nvml_stop(n);
    n->shutdown();
    dlclose(n->lib);
    pthread_mutex_destroy(&n->mu);
    free(n);
}
