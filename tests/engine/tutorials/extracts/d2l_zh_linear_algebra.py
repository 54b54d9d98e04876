import torch

x = torch.tensor(3.0)
y = torch.tensor(2.0)

x + y, x * y, x / y, x**y
# %%
x = torch.arange(4)
x
# %%
x[3]
# %%
len(x)
# %%
x.shape
# %%
A = torch.arange(20).reshape(5, 4)
A
# %%
A.T
# %%
B = torch.tensor([[1, 2, 3], [2, 0, 4], [3, 4, 5]])
B
# %%
B == B.T
# %%
X = torch.arange(24).reshape(2, 3, 4)
X
# %%
A = torch.arange(20, dtype=torch.float32).reshape(5, 4)
B = A.clone()  # 通过分配新内存，将A的一个副本分配给B
A, A + B
# %%
A * B
# %%
a = 2
X = torch.arange(24).reshape(2, 3, 4)
a + X, (a * X).shape
# %%
x = torch.arange(4, dtype=torch.float32)
x, x.sum()
# %%
A.shape, A.sum()
# %%
A_sum_axis0 = A.sum(axis=0)
A_sum_axis0, A_sum_axis0.shape
# %%
A_sum_axis1 = A.sum(axis=1)
A_sum_axis1, A_sum_axis1.shape
# %%
A.sum(axis=[0, 1])  # 结果和A.sum()相同
# %%
A.mean(), A.sum() / A.numel()
# %%
A.mean(axis=0), A.sum(axis=0) / A.shape[0]
# %%
sum_A = A.sum(axis=1, keepdims=True)
sum_A
# %%
A / sum_A
# %%
A.cumsum(axis=0)
# %%
y = torch.ones(4, dtype = torch.float32)
x, y, torch.dot(x, y)
# %%
torch.sum(x * y)
# %%
A.shape, x.shape, torch.mv(A, x)
# %%
B = torch.ones(4, 3)
torch.mm(A, B)
# %%
u = torch.tensor([3.0, -4.0])
torch.norm(u)
# %%
torch.abs(u).sum()
# %%
torch.norm(torch.ones((4, 9)))
