// Placeholder so the library has a source until the importer lands.
namespace dlc::onnx {}
