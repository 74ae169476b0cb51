#pragma once
#include "high/high.hpp"
