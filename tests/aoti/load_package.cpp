// Loads an AOTInductor package written by `shapescript export --aoti` and runs it from C++,
// as the chapter says C++ can: prints the output's shape for each input shape given.
// usage: load_package PACKAGE.pt2 B,C,H,W [B,C,H,W ...]
#include <torch/csrc/inductor/aoti_package/model_package_loader.h>
#include <torch/torch.h>

#include <iostream>
#include <sstream>

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: load_package PACKAGE.pt2 SHAPE [SHAPE...]\n";
    return 2;
  }
  torch::inductor::AOTIModelPackageLoader loader(argv[1]);
  for (int i = 2; i < argc; ++i) {
    std::vector<int64_t> shape;
    std::stringstream text(argv[i]);
    for (std::string part; std::getline(text, part, ',');) shape.push_back(std::stoll(part));
    torch::manual_seed(0);
    std::vector<torch::Tensor> outputs = loader.run({torch::randn(shape)});
    std::cout << "output " << outputs.at(0).sizes() << " sum " << outputs.at(0).sum().item<double>() << "\n";
  }
  return 0;
}
