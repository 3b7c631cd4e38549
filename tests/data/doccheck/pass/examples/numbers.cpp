// A quoted region: compared as text, exactly.
int main() {
  // doc:begin main
  double loss = 4.5911;  // 1e-10 in code is text, not a number to compare
  // doc:end main
  return loss > 0 ? 0 : 1;
}
