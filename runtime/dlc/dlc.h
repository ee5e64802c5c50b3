/* dlc's C API: load a model compiled by `dlc compile -o model.so` and run it.
 *
 *     dlc_model *model = NULL;
 *     if (dlc_model_load("model.so", &model) != DLC_OK) {
 *       fprintf(stderr, "%s\n", dlc_last_error());
 *       return 1;
 *     }
 *     dlc_session *session = NULL;
 *     dlc_session_create(model, DLC_DEVICE_AUTO, &session);
 *     dlc_session_set_input(session, "x", &x);          // DLTensor on the host or the GPU
 *     dlc_session_run(session);
 *     const DLTensor *y = NULL;
 *     dlc_session_get_output(session, "y", &y);          // or bind it: dlc_session_set_output
 *     ...
 *     dlc_session_free(session);
 *     dlc_model_free(model);
 *
 * Every function returns a dlc_status; on failure dlc_last_error() gives the message (per
 * thread). NULL or out-of-range arguments are errors, never crashes. A model is immutable
 * and may be shared by any number of threads; a session is used by one thread at a time
 * (create one per thread). Tensors are DLPack DLTensors (dlpack/dlpack.h, Debian's
 * libdlpack-dev): dense row-major (strides NULL or compact), on the host (kDLCPU,
 * kDLCUDAHost) or on GPU 0 (kDLCUDA) in the CUDA primary context.
 *
 * Linking: `find_package(dlc)` and `target_link_libraries(app dlc::dlc)`, or
 * `pkg-config --cflags --libs dlc`. A model library (`model.so`) holds its own copy of the
 * runtime and exports this API too: link it directly and call dlc_model_load_embedded().
 */
#ifndef DLC_DLC_H_
#define DLC_DLC_H_

#include <stddef.h>
#include <stdint.h>

#include <dlpack/dlpack.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define DLC_API __attribute__((visibility("default")))
#else
#define DLC_API
#endif

typedef enum {
  DLC_OK = 0,
  DLC_ERROR_INVALID_ARGUMENT = 1,  /* NULL, unknown name, wrong dtype or shape, ... */
  DLC_ERROR_NOT_FOUND = 2,         /* file or embedded model missing */
  DLC_ERROR_INCOMPATIBLE = 3,      /* other package format, GPU arch not in the model */
  DLC_ERROR_CORRUPT = 4,           /* truncated or altered model (checksum, verifier) */
  DLC_ERROR_OUT_OF_RANGE = 5,      /* a dim outside the range the model was compiled for */
  DLC_ERROR_UNAVAILABLE = 6,       /* no GPU (or driver) where one was asked for */
  DLC_ERROR_RUNTIME = 7,           /* a CUDA or evaluation failure while running */
  DLC_STATUS_MAX_ENUM = 0x7FFFFFFF /* not a status: makes every 32-bit value a valid one */
} dlc_status;

typedef enum {
  DLC_DEVICE_AUTO = 0, /* the GPU when there is one and the model has a program for it */
  DLC_DEVICE_CPU = 1,  /* the reference backend */
  DLC_DEVICE_GPU = 2,  /* the GPU; an error when there is none */
  DLC_DEVICE_MAX_ENUM = 0x7FFFFFFF /* not a device: makes every 32-bit value a valid one */
} dlc_device;

typedef struct dlc_model dlc_model;
typedef struct dlc_session dlc_session;

/* A model input or output. Strings and arrays belong to the model. shape[i] is -1 for a
 * symbolic dim, whose name is dim_names[i] (NULL for fixed dims). */
typedef struct {
  const char *name;
  DLDataType dtype;
  int32_t ndim;
  const int64_t *shape;
  const char *const *dim_names;
} dlc_tensor_info;

/* "0.1.0": the version of this runtime. */
DLC_API const char *dlc_version(void);
/* The message of the last failed call on this thread ("" when none failed). */
DLC_API const char *dlc_last_error(void);
/* A name for a status ("DLC_ERROR_CORRUPT"). */
DLC_API const char *dlc_status_name(dlc_status status);

/* Loads a model library written by `dlc compile -o` (or a raw package file). */
DLC_API dlc_status dlc_model_load(const char *path, dlc_model **out);
/* Loads a package from memory (copied). `name` is used in messages and may be NULL. */
DLC_API dlc_status dlc_model_load_memory(const void *data, size_t size, const char *name,
                                         dlc_model **out);
/* Inside a model library: the model embedded in it. Elsewhere: DLC_ERROR_NOT_FOUND. */
DLC_API dlc_status dlc_model_load_embedded(dlc_model **out);
/* Drops the caller's handle. Sessions keep their model alive: they may be used and freed
 * after dlc_model_free, and the model is released with the last of them. */
DLC_API void dlc_model_free(dlc_model *model);

/* The dlc version that compiled the model. */
DLC_API dlc_status dlc_model_compiler_version(const dlc_model *model, const char **out);
/* GPU architectures with cubins in the model ("sm_90"); PTX is kept for newer GPUs. */
DLC_API dlc_status dlc_model_num_arches(const dlc_model *model, int32_t *out);
DLC_API dlc_status dlc_model_arch(const dlc_model *model, int32_t index, const char **out);
DLC_API dlc_status dlc_model_num_inputs(const dlc_model *model, int32_t *out);
DLC_API dlc_status dlc_model_num_outputs(const dlc_model *model, int32_t *out);
DLC_API dlc_status dlc_model_input(const dlc_model *model, int32_t index, dlc_tensor_info *out);
DLC_API dlc_status dlc_model_output(const dlc_model *model, int32_t index, dlc_tensor_info *out);
/* The sizes a symbolic dim may take. */
DLC_API dlc_status dlc_model_dim_range(const dlc_model *model, const char *dim, int64_t *min,
                                       int64_t *max);

/* A session on `device`. DLC_DEVICE_AUTO picks the GPU when one is usable, else the CPU
 * with a one-line warning on stderr. */
DLC_API dlc_status dlc_session_create(const dlc_model *model, dlc_device device, dlc_session **out);
/* The same on GPU `gpu` (CUDA's ordinal, after CUDA_VISIBLE_DEVICES; dlc_session_create uses
 * GPU 0): one session per GPU, each loading the model's programs on its own GPU. A GPU that
 * does not exist is DLC_ERROR_UNAVAILABLE, also with DLC_DEVICE_AUTO. Device tensors bound to
 * the session must be on that GPU (DLTensor device_id). */
DLC_API dlc_status dlc_session_create_on_gpu(const dlc_model *model, dlc_device device, int32_t gpu,
                                             dlc_session **out);
DLC_API void dlc_session_free(dlc_session *session);
/* Where the session runs: DLC_DEVICE_CPU or DLC_DEVICE_GPU. */
DLC_API dlc_status dlc_session_device(const dlc_session *session, dlc_device *out);

/* Binds an input. The tensor's memory is read at the next run (not copied now). */
DLC_API dlc_status dlc_session_set_input(dlc_session *session, const char *name,
                                         const DLTensor *tensor);
/* Binds an output to caller memory (host or device), written by each run. Unbound outputs
 * are kept by the session: see dlc_session_get_output. */
DLC_API dlc_status dlc_session_set_output(dlc_session *session, const char *name,
                                          const DLTensor *tensor);
/* Runs and waits. Every input must be bound. */
DLC_API dlc_status dlc_session_run(dlc_session *session);
/* GPU sessions with device tensors: enqueues the run on the caller's CUstream (NULL: the
 * legacy default stream) and returns; the outputs are ready when the stream reaches that
 * point. The session keeps no hold on the stream once this returns: the caller may destroy
 * it (the enqueued work still completes), and a later run on another stream, or on the
 * session's own, waits for this one through an event of the session's. */
DLC_API dlc_status dlc_session_run_async(dlc_session *session, void *cuda_stream);
/* An output of the last run: a bound output's tensor, or memory the session owns (valid until
 * the next run or dlc_session_free): host memory, or, after a run on GPU tensors (inputs in
 * GPU memory), GPU memory on the session's GPU that the session allocated for the output. */
DLC_API dlc_status dlc_session_get_output(dlc_session *session, const char *name,
                                          const DLTensor **out);
/* Takes an unbound output of the last run, without a copy: the session forgets it and the
 * caller owns it, to free with (*out)->deleter(*out) (or to hand on as a DLPack capsule). For
 * GPU runs, its memory is ready when the run is: at once for dlc_session_run, when the stream
 * reaches the run for dlc_session_run_async. A bound output cannot be taken. */
DLC_API dlc_status dlc_session_take_output(dlc_session *session, const char *name,
                                           DLManagedTensor **out);

/* .npy files, read and written by the code `dlc run` uses (format 1.0-3.0, little-endian
 * numbers and bool, C order; anything else is refused with a message naming the file), so a
 * host program and dlc never disagree on what a file holds. */
typedef struct dlc_array dlc_array;
DLC_API dlc_status dlc_array_read_npy(const char *path, dlc_array **out);
/* A host DLTensor over the array's data, valid until dlc_array_free. */
DLC_API const DLTensor *dlc_array_tensor(const dlc_array *array);
DLC_API void dlc_array_free(dlc_array *array);
/* Writes a host tensor (compact row-major) as a .npy file. */
DLC_API dlc_status dlc_array_write_npy(const char *path, const DLTensor *tensor);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DLC_DLC_H_ */
