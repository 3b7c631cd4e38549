// print.cpp: NumPy-style printing of tensors (str() and repr()).
//
// The rules follow NumPy's defaults closely enough for a student to compare
// the two side by side: each element is written with the fewest digits that
// identify it (at most 8 after the point), all elements of a tensor share one
// format and are right-aligned, whole numbers print as "1.", scientific
// notation is used when magnitudes span more than 1e3 or leave [1e-4, 1e8),
// and tensors over 1000 elements show the first and last 3 along each axis.
#include <charconv>
#include <cmath>
#include <ostream>

#include "glassllm/engine/node.h"

namespace glassllm {

namespace {

constexpr std::size_t kThreshold = 1000;  // NumPy's print threshold
constexpr std::size_t kEdgeItems = 3;
constexpr int kPrecision = 8;
constexpr std::size_t kLineWidth = 75;

// The shortest decimal that reads back as the same value in its own type.
template <class T>
std::string shortest(T v, std::chars_format fmt) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v, fmt);
  return std::string(buf, r.ptr);
}

template <class T>
std::string with_precision(T v, std::chars_format fmt, int precision) {
  char buf[128];
  auto r = std::to_chars(buf, buf + sizeof buf, v, fmt, precision);
  return std::string(buf, r.ptr);
}

std::string strip_zeros(std::string s) {  // "1.500" -> "1.5", "2.000" -> "2."
  auto dot = s.find('.');
  if (dot == std::string::npos) return s + ".";
  while (s.size() > dot + 1 && s.back() == '0') s.pop_back();
  return s;
}

struct Formatter {
  bool scientific = false;
  std::size_t int_width = 0, frac_width = 0;      // fixed: digits around the point
  std::size_t width = 0;                          // scientific: whole field
  std::size_t mantissa_digits = std::size_t(-1);  // scientific: digits after the point

  template <class T>
  std::string raw(T v) const {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    if (!scientific) {
      std::string s = shortest(v, std::chars_format::fixed);
      auto dot = s.find('.');
      if (dot != std::string::npos && s.size() - dot - 1 > std::size_t(kPrecision))
        s = with_precision(v, std::chars_format::fixed, kPrecision);
      return strip_zeros(s);
    }
    std::string s = shortest(v, std::chars_format::scientific);  // "1.5e-05"
    auto e = s.find('e');
    std::string mant = s.substr(0, e), exp = s.substr(e + 1);
    if (mant.find('.') != std::string::npos &&
        mant.size() - mant.find('.') - 1 > std::size_t(kPrecision)) {
      s = with_precision(v, std::chars_format::scientific, kPrecision);
      e = s.find('e');
      mant = s.substr(0, e);
      exp = s.substr(e + 1);
    }
    mant = strip_zeros(mant);
    if (mantissa_digits != std::size_t(-1)) {
      std::size_t have = mant.size() - mant.find('.') - 1;
      if (have < mantissa_digits) mant += std::string(mantissa_digits - have, '0');
    }
    char sign = exp[0] == '-' ? '-' : '+';
    std::string digits = exp.substr(exp[0] == '-' || exp[0] == '+' ? 1 : 0);
    if (digits.size() < 2) digits = "0" + digits;
    return mant + "e" + sign + digits;
  }

  template <class T>
  std::string operator()(T v) const {
    std::string s = raw(v);
    if (scientific || !std::isfinite(v))
      return std::string(width > s.size() ? width - s.size() : 0, ' ') + s;
    auto dot = s.find('.');
    std::size_t ip = dot, fp = s.size() - dot - 1;
    return std::string(int_width > ip ? int_width - ip : 0, ' ') + s +
           std::string(frac_width > fp ? frac_width - fp : 0, ' ');
  }
};

template <class T>
Formatter make_formatter(const std::vector<T>& shown) {
  Formatter f;
  double max_abs = 0, min_abs = INFINITY;
  for (T v : shown) {
    if (!std::isfinite(v) || v == 0) continue;
    max_abs = std::max(max_abs, double(std::fabs(v)));
    min_abs = std::min(min_abs, double(std::fabs(v)));
  }
  f.scientific =
      max_abs > 0 && (max_abs >= 1e8 || min_abs < 1e-4 || max_abs / min_abs > 1e3);
  for (T v : shown) {
    std::string s = f.raw(v);
    f.width = std::max(f.width, s.size());
    if (!std::isfinite(v)) continue;
    auto dot = s.find('.');
    if (dot == std::string::npos) continue;
    f.int_width = std::max(f.int_width, dot);
    f.frac_width = std::max(f.frac_width, s.size() - dot - 1);
  }
  if (!f.scientific) {
    // As NumPy: widen the integer part so that "nan", "inf" and "-inf" fit in
    // the common width, then right-align them in it.
    for (T v : shown)
      if (!std::isfinite(v)) {
        std::size_t len = f.raw(v).size();
        if (len > f.frac_width + 1)
          f.int_width = std::max(f.int_width, len - f.frac_width - 1);
      }
    f.width = f.int_width + 1 + f.frac_width;
  }
  if (f.scientific) {
    // NumPy pads every mantissa to the longest one's digits: 1.000e+00, 1.997e+03.
    f.mantissa_digits = 0;
    for (T v : shown) {
      if (!std::isfinite(v)) continue;
      std::string s = f.raw(v);
      std::size_t dot = s.find('.'), e = s.find('e');
      f.mantissa_digits = std::max(f.mantissa_digits, e - dot - 1);
    }
    f.width = 0;
    for (T v : shown) f.width = std::max(f.width, f.raw(v).size());
  }
  return f;
}

template <class T>
struct Printer {
  const T* data;
  const Shape& shape;
  std::vector<std::size_t> strides;
  bool summarise;
  Formatter fmt;
  const char* sep;  // " " for str(), ", " for repr()

  bool skipped(std::size_t len) const { return summarise && len > 2 * kEdgeItems; }

  void collect(std::size_t axis, std::size_t offset, std::vector<T>& out) const {
    if (axis == shape.size()) {
      out.push_back(data[offset]);
      return;
    }
    for (std::size_t i = 0; i < shape[axis]; ++i) {
      if (skipped(shape[axis]) && i == kEdgeItems) i = shape[axis] - kEdgeItems;
      collect(axis + 1, offset + i * strides[axis], out);
    }
  }

  // indent: the column where this axis's '[' stands. Items of the last axis
  // are joined by `sep` and wrapped at kLineWidth; items of an outer axis by a
  // line break per remaining axis, as NumPy separates rows and blocks.
  std::string format(std::size_t axis, std::size_t offset, std::size_t indent) const {
    if (axis == shape.size()) return fmt(data[offset]);
    std::size_t n = shape[axis];
    bool last_axis = axis + 1 == shape.size();
    std::string trimmed_sep = sep;
    while (!trimmed_sep.empty() && trimmed_sep.back() == ' ') trimmed_sep.pop_back();
    std::string between = last_axis
                              ? std::string(sep)
                              : trimmed_sep + std::string(shape.size() - axis - 1, '\n') +
                                    std::string(indent + 1, ' ');
    std::string s = "[";
    std::size_t column = indent + 1;
    for (std::size_t i = 0; i < n; ++i) {
      std::string item;
      if (skipped(n) && i == kEdgeItems) {
        item = "...";
        i = n - kEdgeItems - 1;  // the loop's ++i lands on the first tail item
      } else {
        item = format(axis + 1, offset + i * strides[axis], indent + 1);
      }
      if (last_axis && i > 0 && column + item.size() + trimmed_sep.size() > kLineWidth) {
        while (!s.empty() && s.back() == ' ') s.pop_back();  // wrap long rows
        s += "\n" + std::string(indent + 1, ' ');
        column = indent + 1;
      }
      s += item;
      column += item.size();
      if (i + 1 < n) {
        s += between;
        column += between.size();
      }
    }
    return s + "]";
  }
};

std::string render(const Tensor& t, const char* sep, std::size_t indent) {
  return dispatch(t.dtype(), [&](auto zero) {
    using T = decltype(zero);
    Printer<T> p{
        ptr<T>(t), t.shape(), contiguous_strides(t.shape()), t.size() > kThreshold,
        {},        sep};
    std::vector<T> shown;
    p.collect(0, 0, shown);
    p.fmt = make_formatter(shown);
    return p.format(0, 0, indent);
  });
}

}  // namespace

std::string Tensor::str() const {
  if (!defined()) return "None";
  if (ndim() == 0) {  // NumPy prints a 0-d array like a Python float: "3.0"
    std::string s = dispatch(dtype(), [&](auto zero) {
      return shortest(ptr<decltype(zero)>(*this)[0], std::chars_format::general);
    });
    if (s.find_first_of(".en") == std::string::npos) s += ".0";
    return s;
  }
  return render(*this, " ", 0);
}

std::string Tensor::repr() const {
  if (!defined()) return "None";
  std::string body = render(*this, ", ", 6);  // under "array("
  return "array(" + body + ", dtype=" + dtype_name(dtype()) + ")";
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) {
  return os << t.str();
}

}  // namespace glassllm
