/* A C program linked directly against a model library: dlc_model_load_embedded() finds the
 * model inside it. Runs models/mlp.onnx (x: f32[N,64] -> probs: f32[N,10], softmax rows) on
 * two zero rows on the CPU and prints the sum of the probabilities (2 when right). */
#include <dlc/dlc.h>
#include <stdio.h>

int main(void) {
  dlc_model *model = NULL;
  dlc_session *session = NULL;
  if (dlc_model_load_embedded(&model) != DLC_OK) {
    fprintf(stderr, "embedded_model: %s\n", dlc_last_error());
    return 1;
  }
  int32_t inputs = 0;
  dlc_tensor_info info;
  if (dlc_model_num_inputs(model, &inputs) != DLC_OK || dlc_model_input(model, 0, &info) != DLC_OK)
    return 1;
  printf("embedded model: %d input(s), the first '%s'\n", inputs, info.name);
  float x[2 * 64] = {0};
  int64_t shape[2] = {2, 64};
  DLTensor t = {0};
  t.data = x;
  t.device.device_type = kDLCPU;
  t.ndim = 2;
  t.dtype.code = kDLFloat;
  t.dtype.bits = 32;
  t.dtype.lanes = 1;
  t.shape = shape;
  const DLTensor *y = NULL;
  if (dlc_session_create(model, DLC_DEVICE_CPU, &session) != DLC_OK ||
      dlc_session_set_input(session, "x", &t) != DLC_OK || dlc_session_run(session) != DLC_OK ||
      dlc_session_get_output(session, "probs", &y) != DLC_OK) {
    fprintf(stderr, "embedded_model: %s\n", dlc_last_error());
    return 1;
  }
  double sum = 0;
  for (int i = 0; i < 2 * 10; ++i)
    sum += ((const float *)y->data)[i];
  printf("probs sum %.4f\n", sum);
  dlc_session_free(session);
  dlc_model_free(model);
  return 0;
}
