# The real-model test (stories260K through tools/model's llama2.c runner), labelled `model`.
# Included from tests/CMakeLists.txt after hgca_add_test_exe is defined.
hgca_add_test_exe(hgca_model_tests LABELS model SOURCES test_model.cpp LIBS hgca_model)
