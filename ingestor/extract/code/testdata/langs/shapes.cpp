#include <string>

namespace geo {

template <typename T>
T area(T w, T h) {
    return w * h;
}

class Shape {
  public:
    virtual ~Shape() = default;
    virtual double area() const = 0;
    std::string name() const {
        return R"x(class Fake {
int fake() {)x";
    }
};

}  // namespace geo

int main() {
    return 0;
}
