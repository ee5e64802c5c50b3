// fmt's out-of-line functions, compiled once for the whole project. dlc uses fmt without
// FMT_HEADER_ONLY: in header-only mode every translation unit that includes <fmt/format.h>
// (through ir/status.h, nearly all of them) compiled fmt's implementation again, about 1.5 s
// of compile time each. These objects go into libdlc with the rest of dlc_ir, so a shipped
// runtime still needs no libfmt.
#include <fmt/format-inl.h>

FMT_BEGIN_NAMESPACE
namespace detail {

// The instantiations <fmt/format.h> declares `extern template` outside header-only mode.
template FMT_API auto thousands_sep_impl<char>(locale_ref) -> thousands_sep_result<char>;
template FMT_API auto thousands_sep_impl<wchar_t>(locale_ref) -> thousands_sep_result<wchar_t>;
template FMT_API auto decimal_point_impl(locale_ref) -> char;
template FMT_API auto decimal_point_impl(locale_ref) -> wchar_t;

} // namespace detail
FMT_END_NAMESPACE
